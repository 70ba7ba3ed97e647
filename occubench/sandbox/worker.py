"""The worker: the process, confined by the sandbox provider, that loads and runs code we did not write.

Started as ``python -S -B -m occubench.sandbox.worker SERVICE``, where SERVICE is a module of ours whose ``HANDLERS``
maps request names to functions of JSON data (:mod:`occubench.executable.service`, say). It reads the ``start``
message, puts its limits on itself (they cannot be raised again), installs the system-call filter it was given, and
only then serves requests, one at a time (see :mod:`occubench.sandbox.protocol`). The protocol runs on private
copies of stdin and stdout: what the world's code prints goes to stderr, and it cannot read the requests.
"""

from __future__ import annotations

import base64
import importlib
import os
import resource
import sys
from collections.abc import Callable
from typing import Any

from occubench.core.blame import exhausted
from occubench.core.tools import TimeLimitExceeded, describe
from occubench.errors import ConfigError
from occubench.sandbox import protocol, seccomp

#: rlimit names of the start message's limits.
RLIMITS = {"core": resource.RLIMIT_CORE, "cpu_seconds": resource.RLIMIT_CPU, "memory_bytes": resource.RLIMIT_AS,
           "file_bytes": resource.RLIMIT_FSIZE, "open_files": resource.RLIMIT_NOFILE,
           "processes": resource.RLIMIT_NPROC}


def _read(fd: int) -> Any:
    header = _exactly(fd, protocol.HEADER_SIZE)
    return None if header is None else protocol.decode(_exactly(fd, protocol.length(header)) or b"")


def _exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write(fd: int, message: Any) -> None:
    data = memoryview(protocol.encode(message))
    while data:
        data = data[os.write(fd, data):]


def limit(limits: dict[str, int]) -> None:
    limits = {"core": 0, **limits}
    for name, value in limits.items():
        soft = hard = int(value)
        if name == "cpu_seconds":  # SIGXCPU at the soft limit, SIGKILL one second later
            hard = soft + 1
        try:
            resource.setrlimit(RLIMITS[name], (soft, hard))
        except (ValueError, OSError):
            if sys.platform.startswith("linux"):  # where the sandbox is, every limit must hold
                raise
            # elsewhere (macOS) some limits cannot be set: a plain worker for trusted code goes on without them


def _answer(handler: Callable[[dict[str, Any]], Any], args: dict[str, Any]) -> dict[str, Any]:
    # The handler puts its own time limits on the world's code (a tool call's, say): the request's deadline is the
    # harness's, which kills this process when it passes.
    try:
        return {"ok": handler(args)}
    except ConfigError as exc:
        return {"error": {"kind": "refused", "message": describe(exc)}}
    except TimeLimitExceeded as exc:
        return {"error": {"kind": "timeout", "message": describe(exc)}}
    except MemoryError:
        return {"error": {"kind": "memory", "message": "the worker ran out of its memory limit"}}
    except BaseException as exc:  # noqa: BLE001 - whatever the world's code raised is reported, never fatal here
        # Out of a resource (disk, threads, files): the world's doing, and the harness replaces this worker.
        kind = "failed" if exhausted(exc) is None else "exhausted"
        return {"error": {"kind": kind, "message": f"{type(exc).__name__}: {describe(exc)}"}}


def main(service: str) -> None:
    requests, replies = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)  # what the world prints goes to stderr, never into the protocol
    start = _read(requests)
    if not isinstance(start, dict) or start.get("version") != protocol.VERSION:
        _write(replies, {"error": {"kind": "refused", "message": f"protocol version {protocol.VERSION} expected"},
                         "seq": start.get("seq") if isinstance(start, dict) else None})
        return
    limit(start["limits"])
    handlers: dict[str, Callable[[dict[str, Any]], Any]] = importlib.import_module(service).HANDLERS
    if start.get("filter"):
        seccomp.load(base64.b64decode(start["filter"]))
    _write(replies, {"ok": {"version": protocol.VERSION, "pid": os.getpid()}, "seq": start.get("seq")})
    while (request := _read(requests)) is not None:
        handler = handlers.get(str(request.get("op"))) if isinstance(request, dict) else None
        reply: dict[str, Any]
        if handler is None:
            reply = {"error": {"kind": "refused", "message": f"no such request: {str(request)[:100]}"}}
        else:
            reply = _answer(handler, request.get("args") or {})
        reply["cpu"] = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
        reply["seq"] = request.get("seq") if isinstance(request, dict) else None
        _write(replies, reply)


if __name__ == "__main__":
    main(sys.argv[1])
