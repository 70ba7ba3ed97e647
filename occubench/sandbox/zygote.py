"""The zygote: a warm process in the sandbox that forks workers, so that a new world costs a fork instead of a
sandbox's and an interpreter's start-up and its libraries' imports (FastAPI alone takes a third of a second).

It is a service of the ordinary worker (``occubench.sandbox.worker occubench.sandbox.zygote``), started without the
worker's system-call filter, since it must fork; it runs no world code itself. On ``fork`` it makes a socket pair,
forks, hands one end to the harness over the channel it was started with (``SCM_RIGHTS``) and keeps nothing of it.
The child closes every other descriptor, makes a folder of its own under the sandbox's ``/tmp``, confines itself
with Landlock (:mod:`occubench.sandbox.landlock`: reading the system and the worlds, writing only its folder, no
signal to the zygote or its siblings) and then becomes an ordinary worker of the service asked for on its end of
the pair: it reads the ``start`` message, puts on its limits and its system-call filter, and only then loads a world.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import signal
import socket
import sys
import tempfile
import time
from typing import Any

from occubench.sandbox import landlock

#: Exit statuses kept for the harness to ask about (the oldest are forgotten first).
_MAX_ENDED = 1024
#: The start of each worker's own folder's name, in the temporary folder all the zygote's children share.
_PREFIX = "worker-"
_children: set[int] = set()
_ended: dict[int, int] = {}


def preload(args: dict[str, Any]) -> None:
    """Import the modules every worker of this zygote will need (installed libraries and ours, never a world's
    code); ``module:function`` also calls a function of ours that warms them up."""
    for name in args["modules"]:
        module, _, function = str(name).partition(":")
        imported = importlib.import_module(module)
        if function:
            getattr(imported, function)()
    gc.freeze()  # what the children inherit is never collected by them: no pass over it, no page copied for it


def fork(args: dict[str, Any]) -> int:
    """A new worker of ``args["service"]``; its end of the protocol goes to the harness over ``args["channel"]``."""
    _collect()
    channel = socket.socket(fileno=os.dup(int(args["channel"])))
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:  # the child: nothing below returns
        _become_worker(theirs.fileno(), str(args["service"]))
    try:
        socket.send_fds(channel, [b"w"], [ours.fileno()])
    finally:
        for each in (ours, theirs, channel):
            each.close()
    _children.add(pid)
    return pid


def kill(args: dict[str, Any]) -> None:
    pid = int(args["pid"])
    if pid in _children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def reap(args: dict[str, Any]) -> int | None:
    """The exit status of worker ``args["pid"]`` (negative: the signal that ended it), waiting up to
    ``args["seconds"]``; None if it is still running by then."""
    pid, deadline = int(args["pid"]), time.monotonic() + float(args["seconds"])
    while True:
        _collect()
        if pid in _ended or pid not in _children:
            return _ended.get(pid)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.001)


def _collect() -> None:
    """Reap every worker that ended, keeping its status."""
    while _children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _children.discard(pid)
        _ended[pid] = os.waitstatus_to_exitcode(status)
        while len(_ended) > _MAX_ENDED:
            del _ended[next(iter(_ended))]


def _readable(shared: str) -> list[str]:
    """What a worker may read: everything the sandbox shows but the shared temporary folder (the workers' own
    folders are there), and the Python installation wherever it is (not the temporary folder itself, which is on
    ``sys.path`` as the directory ``-m`` started in)."""
    top = [f"/{entry}" for entry in os.listdir("/") if f"/{entry}" != shared]
    python = {os.path.realpath(path) for path in (sys.prefix, sys.base_prefix, *sys.path) if path}
    return top + sorted(path for path in python if path != shared and not path.startswith(f"{shared}/{_PREFIX}"))


def _become_worker(fd: int, service: str) -> None:
    from occubench.sandbox import worker

    status = 1
    try:
        os.dup2(fd, 0)
        os.dup2(fd, 1)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the zygote's protocol, its channel, the other end of the pair
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        shared = tempfile.gettempdir()
        home = tempfile.mkdtemp(prefix=_PREFIX, dir=shared)
        tempfile.tempdir = home
        os.environ["TMPDIR"] = home
        os.chdir(home)
        landlock.restrict(_readable(shared), home)
        worker.main(service)
        status = 0
    finally:
        os._exit(status)  # never back into the zygote's loop, never its exit handlers


HANDLERS = {"preload": preload, "fork": fork, "kill": kill, "reap": reap}
