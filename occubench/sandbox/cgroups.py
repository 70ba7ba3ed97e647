"""A control group capping the processes of one shell command and all it starts (the kernel's pids controller),
for when the process limit cannot: a harness running as root maps the sandbox's user to root, whom the kernel
exempts from ``RLIMIT_NPROC``. Version 2 hierarchies (with the pids controller enabled for children) and version
1 ``pids`` hierarchies are both used, where this process may write them."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

#: Seconds to wait for a group's processes to be gone before it is left behind (a loaded machine tears a fork bomb
#: down slowly; the wait ends as soon as the group is removed).
EMPTY_SECONDS = 60.0
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
def capped(processes: int, purpose: str) -> Iterator[Path | None]:
    """A new group of at most ``processes`` processes (None where there is no writable pids hierarchy), removed
    once its processes are gone."""
    group = make(processes, purpose)
    try:
        yield group
    finally:
        if group is not None:
            remove(group)


def make(processes: int, purpose: str) -> Path | None:
    """A new group of at most ``processes`` processes, or None where there is no writable pids hierarchy; the
    caller removes it with :func:`remove`. Named ``occubench-PURPOSE-PID-...`` (:func:`prefix`): whose it is and
    what for, to anyone looking at the hierarchy."""
    root = pids_root()
    if root is None:
        return None
    group = root / f"{prefix(purpose)}{uuid.uuid4().hex[:16]}"
    group.mkdir()
    try:
        (group / "pids.max").write_text(str(processes))
    except OSError:
        group.rmdir()
        raise
    return group


def prefix(purpose: str) -> str:
    """The start of the name of every group this process makes for ``purpose`` (``shell``, ``worker``)."""
    return f"occubench-{purpose}-{os.getpid()}-"


def remove(group: Path) -> None:
    """Remove ``group`` once empty, killing what is still in it: a member that outlived the command's own kill (a
    fork bomb's last children) would otherwise keep the group, and the kernel its processes, past the episode."""
    deadline = time.monotonic() + EMPTY_SECONDS
    while True:
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # EBUSY: members left
            if time.monotonic() > deadline:
                return
        _kill_members(group)
        time.sleep(0.01)


def _kill_members(group: Path) -> None:
    kill = group / "cgroup.kill"  # version 2 (Linux 5.14+): the kernel kills every member, new forks included
    with contextlib.suppress(OSError):
        if kill.is_file():
            kill.write_text("1")
            return
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)


def enter(group: Path) -> None:
    """Move the calling process into ``group`` (run in a child between fork and exec: no lock, no allocation
    beyond the write)."""
    place(group, os.getpid())


def place(group: Path, pid: int) -> None:
    """Move process ``pid`` (as this process's PID namespace numbers it), all its threads, into ``group``."""
    fd = os.open(group / "cgroup.procs", os.O_WRONLY)
    try:
        os.write(fd, str(pid).encode())
    finally:
        os.close(fd)
