"""A control group capping the processes of one shell command and all it starts (the kernel's pids controller),
for when the process limit cannot: a harness running as root maps the sandbox's user to root, whom the kernel
exempts from ``RLIMIT_NPROC``. Version 2 hierarchies (with the pids controller enabled for children) and version
1 ``pids`` hierarchies are both used, where this process may write them."""

from __future__ import annotations

import contextlib
import functools
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

#: Seconds to wait for a group's killed processes to be gone before it is removed.
EMPTY_SECONDS = 5.0
_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))


@functools.cache
def pids_root() -> Path | None:
    """A pids hierarchy this process can make groups in, or None."""
    for root in _ROOTS:
        if not (root / "cgroup.procs").is_file() or not os.access(root, os.W_OK):
            continue
        controllers = root / "cgroup.subtree_control"
        if controllers.is_file() and "pids" not in controllers.read_text().split():
            continue  # version 2 without the pids controller for children
        if (root / "pids.max").exists() or controllers.is_file() or (root / "tasks").is_file():
            return root
    return None


@contextlib.contextmanager
def capped(processes: int) -> Iterator[Path | None]:
    """A new group of at most ``processes`` processes (None where there is no writable pids hierarchy), removed
    once its processes are gone."""
    root = pids_root()
    if root is None:
        yield None
        return
    group = root / f"occubench-{uuid.uuid4().hex[:16]}"
    group.mkdir()
    try:
        (group / "pids.max").write_text(str(processes))
        yield group
    finally:
        # The killed processes leave as the kernel tears them down: wait for the group to empty, for a while.
        deadline = time.monotonic() + EMPTY_SECONDS
        while time.monotonic() < deadline and _members(group):
            time.sleep(0.01)
        with contextlib.suppress(OSError):
            group.rmdir()


def _members(group: Path) -> bool:
    try:
        return bool((group / "cgroup.procs").read_text().strip())
    except OSError:
        return False


def enter(group: Path) -> None:
    """Move the calling process into ``group`` (run in a child between fork and exec: no lock, no allocation
    beyond the write)."""
    fd = os.open(group / "cgroup.procs", os.O_WRONLY)
    try:
        os.write(fd, str(os.getpid()).encode())
    finally:
        os.close(fd)
