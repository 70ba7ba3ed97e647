"""Workers seen from the harness: one process each, a deadline on every request, and warm pools to lease them from.

A :class:`Worker` answers one request at a time. Its deadline is enforced here, outside the code that runs: when
no reply has come by then, the worker's whole process group is killed and the request fails with
:class:`WorkerFailed` (kind ``timeout``); a worker that dies (a segfault, a limit) fails it with kind ``crashed``.
A :class:`Pool` keeps started workers for one service and set of folders, and lends each to one user at a time
(an episode), so a new episode costs a request, not a process; a worker that failed, or has used half its CPU
allowance, is not lent again.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from occubench.errors import ConfigError
from occubench.sandbox import protocol, seccomp
from occubench.sandbox.provider import Limits, Provider
from occubench.util.openfiles import readable

_T = TypeVar("_T")
#: Seconds a worker may take to start (Python's start-up and our imports, in a fresh namespace).
START_SECONDS = 30.0
#: Seconds past a request's own time limit before the worker is killed: the worker's own interrupt comes first.
GRACE_SECONDS = 2.0


class WorkerFailed(Exception):
    """A request without a usable reply: kind ``timeout``, ``crashed``, ``memory``, ``refused``, ``failed`` or
    ``protocol``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Worker:
    def __init__(self, provider: Provider, service: str, folders: Sequence[Path], limits: Limits,
                 channel: int | None = None) -> None:
        """``channel``: a zygote's (see :meth:`Provider.start`), which runs without the worker's system-call
        filter: it forks, and each of its children puts the filter on itself."""
        self.provider, self.folders = provider, tuple(folders)
        self.cpu = 0.0
        self.limits = limits
        self.broken = False
        self._seq = 0  # the number of the last request sent, which its reply must carry
        try:
            self._process = provider.start(service, self.folders, limits, channel)
        except (OSError, WorkerFailed) as exc:
            raise WorkerFailed("crashed", f"{provider.name} could not start: {exc}") from None
        filter_program = seccomp.worker_filter() if seccomp.library() is not None and channel is None else b""
        try:
            hello = self.request("start", {}, START_SECONDS, message={
                "version": protocol.VERSION, "limits": provider.rlimits(limits),
                "filter": base64.b64encode(filter_program).decode()})
            if not isinstance(hello, dict) or hello.get("version") != protocol.VERSION:
                raise WorkerFailed("protocol", f"a worker of another protocol version: {str(hello)[:100]}")
        except WorkerFailed:
            self.kill()
            raise

    def path(self, index: int) -> str:
        """Where the worker sees the ``index``-th of its folders."""
        return self.provider.path(self.folders[index], index)

    def request(self, op: str, args: dict[str, Any], seconds: float | None,
                message: dict[str, Any] | None = None, check: Callable[[Any], _T] | None = None) -> Any:
        """The result of ``op`` (what ``check`` makes of it, when given); :class:`WorkerFailed` when there is none.
        The deadline, ``seconds`` and ``GRACE_SECONDS`` (for a limit the service itself puts on the code it runs),
        covers the whole call: reading the reply, decoding it within its :func:`~protocol.bound` and ``check``. The
        worker is killed when it passes, and whenever the reply is not one the harness takes; None for no
        deadline."""
        if self.broken:
            raise WorkerFailed("crashed", "the worker is no longer running")
        deadline = None if seconds is None else time.monotonic() + seconds + GRACE_SECONDS
        bound = protocol.bound(op)
        self._seq += 1
        try:
            self._send({**(message if message is not None else {"op": op, "args": args}), "seq": self._seq})
            size = protocol.length(self._receive(protocol.HEADER_SIZE, deadline), bound.bytes)
            reply = protocol.decode(self._receive(size, deadline), bound)
            if not isinstance(reply, dict) or not isinstance(reply.get("cpu", 0), (int, float)):
                raise protocol.ProtocolError("a reply that is not one of the protocol's")
            if reply.get("seq") != self._seq:
                raise protocol.ProtocolError(f"a reply to request {str(reply.get('seq'))[:20]}, not to request "
                                             f"{self._seq}")
        except WorkerFailed:
            self.kill()
            raise
        except protocol.ProtocolError as exc:
            self.kill()
            raise WorkerFailed("protocol", f"{op}: {exc}") from None
        except OSError as exc:
            self.kill()
            raise WorkerFailed("crashed", f"{op}: {self._death(str(exc))}") from None
        result = self._result(reply)
        if check is not None:
            try:
                result = check(result)
            except BaseException:  # a worker whose reply the check refuses is not lent again
                self.kill()
                raise
        if deadline is not None and time.monotonic() > deadline:
            self.kill()
            raise WorkerFailed("timeout", f"{op}: the reply was not read and checked by its deadline: the worker "
                                          "was stopped")
        return result

    def _result(self, reply: dict[str, Any]) -> Any:
        """The reply's result; :class:`WorkerFailed` for an error it reports."""
        self.cpu = float(reply.get("cpu", 0))
        error = reply.get("error")
        if error is not None:
            kind = error.get("kind") if isinstance(error, dict) else None
            text = str(error.get("message", "")) if isinstance(error, dict) else str(error)
            if kind not in ("refused", "timeout", "memory", "exhausted", "failed"):
                kind = "failed"
            if kind in ("memory", "exhausted"):
                # A process that ran out of memory may hold a half-built state; one out of disk or processes
                # holds them still. Either is replaced.
                self.kill()
            raise WorkerFailed(kind, text[:4000])
        return reply.get("ok")

    def _send(self, message: dict[str, Any]) -> None:
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        if readable(stdout.fileno(), 0):
            if not os.read(stdout.fileno(), 1):
                raise WorkerFailed("crashed", self._death("the worker ended"))
            # Bytes no request asked for: world code wrote to the protocol itself, and would answer the next one.
            raise protocol.ProtocolError("the worker wrote between requests")
        stdin.write(protocol.encode(message))

    def _receive(self, size: int, deadline: float | None) -> bytes:
        stdout = self._process.stdout
        assert stdout is not None
        chunks, left = [], size
        while left:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not readable(stdout.fileno(), wait):
                raise WorkerFailed("timeout", f"no reply within {wait if deadline is None else 'its deadline'}: "
                                              "the worker was stopped")
            chunk = os.read(stdout.fileno(), min(left, 1 << 20))
            if not chunk:
                raise WorkerFailed("crashed", self._death("the worker ended"))
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _death(self, default: str) -> str:
        try:
            code = self._process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return default
        number = -code if code < 0 else code - 128 if self.provider.confined and code > 128 else 0  # bwrap: 128 + n
        with contextlib.suppress(ValueError):
            return f"the worker was ended by signal {signal.Signals(number).name}"
        return f"the worker ended with exit status {code}" if code else default

    def kill(self) -> None:
        """Stop the worker and everything it started (its whole process group)."""
        self.broken = True
        self.provider.kill(self._process)
        for stream in (self._process.stdin, self._process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=5)


#: Idle workers kept warm across all pools of the process, and for how long: enough to serve the next episodes at
#: once, while a long-lived process that met many world folders (a test session, a notebook) keeps few.
MAX_IDLE, IDLE_SECONDS = 32, 60.0


#: Memory one lent worker is counted for: an interpreter of its own with its bwrap (about 28 MB each measured with
#: 185 executable worlds' workers; ``benchmarks/README.md``), and room for its world's state.
WORKER_BYTES = 48 << 20
_lendable: threading.BoundedSemaphore | None = None
_lendable_lock = threading.Lock()


def max_workers() -> int:
    """Workers lent at once across the process, at most: ``OCCUBENCH_MAX_WORKERS``, else as many as three quarters
    of the memory available now hold at :data:`WORKER_BYTES` each. Thousands of episodes in flight would otherwise
    start thousands of interpreters, and the kernel would end the run for want of memory; beyond the bound, an
    instance waits for a worker to be given back. (Every kind of world holds one worker per instance, so waiting
    cannot deadlock.)"""
    if (asked := os.environ.get("OCCUBENCH_MAX_WORKERS", "").strip()):
        try:
            return max(1, int(asked))
        except ValueError:
            raise ConfigError(f"OCCUBENCH_MAX_WORKERS={asked!r}: not a whole number") from None
    return max(4, available_memory() * 3 // 4 // WORKER_BYTES)


def available_memory() -> int:
    """Bytes of memory available to start programs (Linux's MemAvailable; elsewhere, all of it)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            return int(next(line for line in meminfo if line.startswith("MemAvailable:")).split()[1]) * 1024
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _slots() -> threading.BoundedSemaphore:
    global _lendable
    with _lendable_lock:
        if _lendable is None:
            _lendable = threading.BoundedSemaphore(max_workers())
        return _lendable


class Pool:
    """Started workers of one provider, service and set of folders, lent to one user at a time (and to no more
    users across the process than :func:`max_workers`)."""

    def __init__(self, provider: Provider, service: str, folders: Sequence[Path], limits: Limits) -> None:
        self.provider, self.service, self.folders, self.limits = provider, service, tuple(folders), limits
        self._idle: list[tuple[float, Worker]] = []  # (idle since, worker), the most recent last
        self._lock = threading.Lock()

    def lease(self) -> Worker:
        """A worker, once fewer than :func:`max_workers` are lent; give it back with :meth:`release`."""
        slots = _slots()
        slots.acquire()
        try:
            with self._lock:
                while self._idle:
                    _, worker = self._idle.pop()
                    if not worker.broken:
                        return worker
            return Worker(self.provider, self.service, self.folders, self.limits)
        except BaseException:
            slots.release()
            raise

    def release(self, worker: Worker) -> None:
        try:
            if worker.cpu > self.limits.cpu_seconds / 2:
                worker.kill()
            if not worker.broken:
                with self._lock:
                    self._idle.append((time.monotonic(), worker))
        finally:
            _slots().release()
        _trim()

    @contextlib.contextmanager
    def leased(self) -> Iterator[Worker]:
        worker = self.lease()
        try:
            yield worker
        finally:
            self.release(worker)

    def idle(self) -> list[tuple[float, Worker]]:
        with self._lock:
            return list(self._idle)

    def retire(self, worker: Worker) -> None:
        """Stop ``worker`` if it is still idle here (not lent again meanwhile)."""
        with self._lock:
            kept = [(since, each) for since, each in self._idle if each is not worker]
            found, self._idle = len(kept) < len(self._idle), kept
        if found:
            worker.kill()

    def close(self) -> None:
        with self._lock:
            workers, self._idle = [worker for _, worker in self._idle], []
        for worker in workers:
            worker.kill()


_pools: dict[tuple[str, str, tuple[Path, ...], Limits], Pool] = {}
_pools_lock = threading.Lock()
DEFAULT_LIMITS = Limits()


def pool(provider: Provider, service: str, folders: Sequence[Path], limits: Limits = DEFAULT_LIMITS) -> Pool:
    """The process's pool for this provider, service, folders and limits (made on first use)."""
    key = (provider.name, service, tuple(folder.resolve() for folder in folders), limits)
    with _pools_lock:
        if key not in _pools:
            _pools[key] = Pool(provider, service, key[2], limits)
        return _pools[key]


def _trim() -> None:
    """Stop the workers idle for longer than ``IDLE_SECONDS``, and the oldest beyond ``MAX_IDLE``."""
    with _pools_lock:
        pools = list(_pools.values())
    idle = sorted(((since, each, worker) for each in pools for since, worker in each.idle()), key=lambda e: e[0])
    now = time.monotonic()
    for number, (since, each, worker) in enumerate(idle):
        if now - since > IDLE_SECONDS or number < len(idle) - MAX_IDLE:
            each.retire(worker)


@atexit.register
def _close_pools() -> None:
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for each in pools:
        each.close()
