"""Workers forked from a zygote (:mod:`occubench.sandbox.zygote`), seen from the harness: a :class:`Forking`
provider starts each worker as a child of one warm process in the base provider's sandbox, so a world's worker costs
a fork and its own loading, not a sandbox's, an interpreter's and its libraries' start-up.

The base provider's wall (bubblewrap's namespaces, mounts and filters) holds for the zygote and every child as it
holds for a worker of its own; what a child adds is Landlock, which keeps the children of one zygote apart (each
writes only beneath its own folder and signals no one else). Where the kernel has no Landlock of ABI 6,
:func:`forking` gives the base provider back: each world then gets a sandbox of its own, only slower to start.

The worlds' folders must all lie beneath one root, which the zygote is shown (read-only) when it starts; each child
may read only its own world's folders there. What one child uses is its own: a private ``/tmp`` (a tmpfs of its own
in the zygote's sandbox, emptied when it ends), a control group of the pids controller capping its threads where
this process can make one (as root, whom the kernel exempts from the process limit), and memory its address-space
limit counts (the worker's filter refuses memory that no mapping holds; :mod:`occubench.sandbox.seccomp`).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import signal
import socket
import struct
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from occubench.sandbox import cgroups, landlock
from occubench.sandbox.pool import DEFAULT_LIMITS, MAX_IDLE, START_SECONDS, Worker, WorkerFailed, max_workers
from occubench.sandbox.provider import Limits, Provider

SERVICE = "occubench.sandbox.zygote"
#: Workers one zygote's process cap is sized for: it counts threads, shared by all its children, where no control
#: group caps each child's.
CHILDREN = 64
#: The most children a zygote runs at once (each a private ``/tmp``, mounted as the zygote starts: 0.2 ms each).
MAX_CHILDREN = 4096


def children() -> int:
    """Children a zygote mounts a private ``/tmp`` for: as many workers as the process lends at once and keeps idle,
    and room for those being stopped."""
    return min(max_workers() + MAX_IDLE + CHILDREN, MAX_CHILDREN)


class Zygote:
    """One warm process of ``base`` that forks workers seeing ``root``; started (again) on first use."""

    def __init__(self, base: Provider, root: Path, preload: Sequence[str]) -> None:
        self.base, self.root, self.preload = base, root, tuple(preload)
        self.limits = replace(DEFAULT_LIMITS, processes=DEFAULT_LIMITS.processes * CHILDREN, children=children())
        self._lock = threading.Lock()
        self._worker: Worker | None = None
        self._channel: socket.socket | None = None
        self._number = -1

    def fork(self, service: str, read: list[str]) -> ForkedProcess:
        with self._lock:
            worker, channel = self._started()
            try:
                child = worker.request("fork", {"service": service, "channel": self._number, "read": read},
                                       START_SECONDS)
                _, fds, _, _ = socket.recv_fds(channel, 1, 1)
            except (OSError, WorkerFailed) as exc:
                worker.kill()
                raise WorkerFailed("crashed", f"the zygote could not fork a worker: {exc}") from None
            if not (isinstance(child, dict) and isinstance(child.get("pid"), int)
                    and isinstance(child.get("home"), str)) or len(fds) != 1:
                worker.kill()
                raise WorkerFailed("protocol", "the zygote's reply to fork is not one of the protocol's")
            return ForkedProcess(self, child["pid"], child["home"], socket.socket(fileno=fds[0]))

    @property
    def running(self) -> bool:
        with self._lock:
            return self._worker is not None and not self._worker.broken

    def _started(self) -> tuple[Worker, socket.socket]:
        if self._worker is None or self._worker.broken or self._channel is None:
            if self._channel is not None:
                self._channel.close()
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            self._number = theirs.fileno()  # the zygote's end keeps its number in the zygote
            try:
                self._worker = Worker(self.base, SERVICE, [self.root], self.limits, channel=self._number)
            finally:
                theirs.close()
            ours.settimeout(START_SECONDS)
            self._channel = ours
            self._worker.request("preload", {"modules": list(self.preload)}, START_SECONDS)
        return self._worker, self._channel

    def close(self) -> None:
        """Stop the zygote; its children end with it in a sandbox of its own (a plain zygote's, when their channel
        closes)."""
        with self._lock:
            if self._worker is not None:
                self._worker.kill()
            if self._channel is not None:
                self._channel.close()
            self._worker = self._channel = None

    def request(self, op: str, args: dict[str, object], seconds: float) -> object:
        """``op`` of the running zygote; None when it no longer runs (its children ended with it)."""
        with self._lock:
            if self._worker is None or self._worker.broken:
                return None
            with contextlib.suppress(WorkerFailed):
                return self._worker.request(op, args, seconds)
            return None


class ForkedProcess:
    """A forked worker, as a :class:`~occubench.sandbox.pool.Worker` uses a process: its protocol's two ends (one
    socket), its process id in the zygote's sandbox, and its exit status; its home there, its process id in this
    process's PID namespace and its control group, once :meth:`confine` found them."""

    def __init__(self, zygote: Zygote, pid: int, home: str, channel: socket.socket) -> None:
        self.zygote, self.pid, self.home = zygote, pid, home
        self.host_pid: int | None = None
        self.group: Path | None = None
        fd = channel.detach()
        self.stdout = io.FileIO(fd, "rb")
        self.stdin = io.FileIO(fd, "wb", closefd=False)  # closed with stdout, which owns the descriptor

    def confine(self, processes: int) -> None:
        """Put the worker in a pids group of ``processes`` of its own (where this process can make one), before
        it is sent its ``start``: it waits for that message before any world code runs. Its first byte's
        credentials say its process id as this process's namespace numbers it (the kernel translates it)."""
        with socket.socket(fileno=os.dup(self.stdout.fileno())) as end:
            end.settimeout(START_SECONDS)
            try:
                said, ancillary, _, _ = end.recvmsg(1, socket.CMSG_SPACE(struct.calcsize("3i")))
            finally:
                end.settimeout(None)
        credentials = [data for level, kind, data in ancillary
                       if (level, kind) == (socket.SOL_SOCKET, socket.SCM_CREDENTIALS)]
        if said != b"c" or not credentials or struct.unpack("3i", credentials[0][:12])[0] <= 0:
            raise OSError("the forked worker did not say who it is")
        self.host_pid = struct.unpack("3i", credentials[0][:12])[0]
        self.group = cgroups.make(processes, "worker")
        if self.group is not None:
            cgroups.place(self.group, self.host_pid)

    def wait(self, timeout: float) -> int:
        code = self.zygote.request("reap", {"pid": self.pid, "seconds": timeout}, timeout)
        if not isinstance(code, int):
            if self.zygote.running:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
            code = -signal.SIGKILL  # its zygote's sandbox ended, and every process in it
        self.release()
        return code

    def release(self) -> None:
        """Remove its control group, killing whatever is left in it."""
        group, self.group = self.group, None
        if group is not None:
            cgroups.remove(group)


class Forking(Provider):
    """Workers of ``base`` forked from one zygote that preloaded ``preload`` and sees the folders under ``root``."""

    def __init__(self, base: Provider, root: Path, preload: Sequence[str]) -> None:
        self.base, self.root = base, root.resolve()
        self.name, self.confined = f"{base.name}+zygote", base.confined
        self.zygote = Zygote(base, self.root, preload)

    def describe(self) -> str:
        return f"{self.base.describe()}; a worker per world forked from a warm zygote, kept apart by Landlock"

    def path(self, folder: Path, index: int) -> str:
        return f"{self.base.path(self.root, 0)}/{folder.resolve().relative_to(self.root)}"

    def rlimits(self, limits: Limits) -> dict[str, int]:
        # The process cap counts every thread of the zygote's sandbox: the zygote set it for all its children.
        return {key: value for key, value in self.base.rlimits(limits).items() if key != "processes"}

    def start(self, service: str, folders: Sequence[Path], limits: Limits,
              channel: int | None = None) -> subprocess.Popen[bytes]:
        outside = [str(folder) for folder in folders if not folder.resolve().is_relative_to(self.root)]
        if outside or channel is not None:
            raise OSError(f"a forked worker sees only folders under {self.root}, and is no zygote: {outside}")
        process = self.zygote.fork(service, [self.path(folder, index) for index, folder in enumerate(folders)])
        try:
            process.confine(limits.processes)
        except OSError:
            self.zygote.request("kill", {"pid": process.pid}, START_SECONDS)
            process.stdout.close()
            process.release()
            raise
        return process  # type: ignore[return-value]  # a Popen as far as a Worker uses one

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        self.zygote.request("kill", {"pid": process.pid}, START_SECONDS)

    def close(self) -> None:
        self.zygote.close()


_current: dict[tuple[str, tuple[str, ...]], Forking] = {}
_current_lock = threading.Lock()


def forking(base: Provider, root: Path, preload: tuple[str, ...]) -> Provider:
    """Workers forked from a zygote where this kernel can keep them apart (Landlock ABI 6), else ``base``. One
    zygote per provider and preload at a time: one for another root (a process that changed its cache folder, as
    tests do) stops the one before."""
    if landlock.abi() < landlock.REQUIRED_ABI:
        return base
    key = (base.name, preload)
    with _current_lock:
        found = _current.get(key)
        if found is not None and found.root == root.resolve():
            return found
        if found is not None:
            found.close()
        _current[key] = Forking(base, root, preload)
        return _current[key]


@atexit.register
def _close() -> None:
    with _current_lock:
        for provider in _current.values():
            provider.close()
