"""Workers forked from a zygote (:mod:`occubench.sandbox.zygote`), seen from the harness: a :class:`Forking`
provider starts each worker as a child of one warm process in the base provider's sandbox, so a world's worker costs
a fork and its own loading, not a sandbox's, an interpreter's and its libraries' start-up.

The base provider's wall (bubblewrap's namespaces, mounts and filters) holds for the zygote and every child as it
holds for a worker of its own; what a child adds is Landlock, which keeps the children of one zygote apart (each
writes only beneath its own folder and signals no one else). Where the kernel has no Landlock of ABI 6,
:func:`forking` gives the base provider back: each world then gets a sandbox of its own, only slower to start.

The worlds' folders must all lie beneath one root, which the zygote is shown (read-only) when it starts.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import socket
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from occubench.sandbox import landlock
from occubench.sandbox.pool import DEFAULT_LIMITS, START_SECONDS, Worker, WorkerFailed
from occubench.sandbox.provider import Limits, Provider

SERVICE = "occubench.sandbox.zygote"
#: Workers one zygote is sized for: its private ``/tmp`` holds this many workers' share, and its process cap (which
#: counts threads, shared by all its children) this many workers' threads.
CHILDREN = 64


class Zygote:
    """One warm process of ``base`` that forks workers seeing ``root``; started (again) on first use."""

    def __init__(self, base: Provider, root: Path, preload: Sequence[str]) -> None:
        self.base, self.root, self.preload = base, root, tuple(preload)
        self.limits = replace(DEFAULT_LIMITS, tmp_bytes=DEFAULT_LIMITS.tmp_bytes * CHILDREN,
                              processes=DEFAULT_LIMITS.processes * CHILDREN)
        self._lock = threading.Lock()
        self._worker: Worker | None = None
        self._channel: socket.socket | None = None
        self._number = -1

    def fork(self, service: str) -> ForkedProcess:
        with self._lock:
            worker, channel = self._started()
            try:
                pid = worker.request("fork", {"service": service, "channel": self._number}, START_SECONDS)
                _, fds, _, _ = socket.recv_fds(channel, 1, 1)
            except (OSError, WorkerFailed) as exc:
                worker.kill()
                raise WorkerFailed("crashed", f"the zygote could not fork a worker: {exc}") from None
            if not isinstance(pid, int) or len(fds) != 1:
                worker.kill()
                raise WorkerFailed("protocol", "the zygote's reply to fork is not one of the protocol's")
            return ForkedProcess(self, pid, socket.socket(fileno=fds[0]))

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
    socket), its process id in the zygote's sandbox, and its exit status."""

    def __init__(self, zygote: Zygote, pid: int, channel: socket.socket) -> None:
        self.zygote, self.pid = zygote, pid
        fd = channel.detach()
        self.stdout = io.FileIO(fd, "rb")
        self.stdin = io.FileIO(fd, "wb", closefd=False)  # closed with stdout, which owns the descriptor

    def wait(self, timeout: float) -> int:
        code = self.zygote.request("reap", {"pid": self.pid, "seconds": timeout}, timeout)
        if not isinstance(code, int):
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
        return code


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
        return self.zygote.fork(service)  # type: ignore[return-value]  # a Popen as far as a Worker uses one

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
