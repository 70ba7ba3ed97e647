"""The zygote: a warm process in the sandbox that forks workers, so that a new world costs a fork instead of a
sandbox's and an interpreter's start-up and its libraries' imports (FastAPI alone takes a third of a second).

It is a service of the ordinary worker (``occubench.sandbox.worker occubench.sandbox.zygote``), started without the
worker's system-call filter, since it must fork; it runs no world code itself. On ``fork`` it makes a socket pair,
forks, hands one end to the harness over the channel it was started with (``SCM_RIGHTS``) and keeps nothing of it.
The child closes every other descriptor and says one byte on its end, which carries its credentials: the harness
learns its process id as the harness's PID namespace numbers it, to put it in a control group of its own. It works
in a home the zygote made for it on a tmpfs no other child uses (see :data:`~occubench.sandbox.provider.
CHILDREN_TMP`), confines itself with Landlock (:mod:`occubench.sandbox.landlock`: reading the system and its own
world's folders only, writing only its home, no signal to the zygote or its siblings) and then becomes an ordinary
worker of the service asked for on its end of the pair: it reads the ``start`` message (sent once it is in its
group), puts on its limits and its system-call filter, and only then loads a world. When it has ended, the zygote
removes its home.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import signal
import socket
import stat
import sys
import tempfile
import time
from typing import Any

from occubench.sandbox import landlock
from occubench.sandbox.provider import CHILDREN_TMP, WORLDS_ROOT

#: Exit statuses kept for the harness to ask about (the oldest are forgotten first).
_MAX_ENDED = 1024
#: The start of each worker's home's name.
_PREFIX = "worker-"
#: Each running child's home, by process id.
_children: dict[int, str] = {}
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


def fork(args: dict[str, Any]) -> dict[str, Any]:
    """A new worker of ``args["service"]`` that may read ``args["read"]``; its end of the protocol goes to the
    harness over ``args["channel"]``. Its process id here and its home."""
    _collect()
    home = tempfile.mkdtemp(prefix=_PREFIX, dir=_free_tmp())
    channel = socket.socket(fileno=os.dup(int(args["channel"])))
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)  # before the child speaks: its byte then carries them
    pid = os.fork()
    if pid == 0:  # the child: nothing below returns
        _become_worker(theirs.fileno(), str(args["service"]), [str(path) for path in args["read"]], home)
    _children[pid] = home
    try:
        socket.send_fds(channel, [b"w"], [ours.fileno()])
    finally:
        for each in (ours, theirs, channel):
            each.close()
    return {"pid": pid, "home": home}


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
        _remove(_children.pop(pid, ""))
        _ended[pid] = os.waitstatus_to_exitcode(status)
        while len(_ended) > _MAX_ENDED:
            del _ended[next(iter(_ended))]


def _free_tmp() -> str:
    """A folder of the sandbox's children's tmpfs that no running child works in; where the sandbox mounted none (a
    plain zygote, for trusted code), the temporary folder."""
    try:
        mounted = sorted(os.listdir(CHILDREN_TMP), key=lambda name: int(name) if name.isdigit() else -1)
    except FileNotFoundError:
        return tempfile.gettempdir()
    taken = {os.path.dirname(home) for home in _children.values()}
    for name in mounted:
        folder = f"{CHILDREN_TMP}/{name}"
        if folder not in taken and not os.listdir(folder):  # a home it could not remove keeps its tmpfs
            return folder
    raise OSError(f"all {len(mounted)} private /tmp folders of this zygote are in use")


def _remove(home: str) -> None:
    """Remove an ended child's ``home`` and all in it, without recursion: each folder's folders are moved up into
    ``home`` before it is emptied, so no path grows long however deep the child nested them, and every folder is
    made the zygote's to list first (the child ran as the same user). Whatever cannot be removed stays, and keeps
    its tmpfs from being used again."""
    if not home:
        return
    moved = 0
    with contextlib.suppress(OSError):
        os.chmod(home, stat.S_IRWXU)
        while entries := os.listdir(home):
            for name in entries:
                path = f"{home}/{name}"
                if not stat.S_ISDIR(os.lstat(path).st_mode):
                    os.unlink(path)
                    continue
                os.chmod(path, stat.S_IRWXU)
                for inner in os.listdir(path):
                    if stat.S_ISDIR(os.lstat(f"{path}/{inner}").st_mode):
                        while os.path.lexists(f"{home}/.{moved}"):
                            moved += 1
                        os.rename(f"{path}/{inner}", f"{home}/.{moved}")
                    else:
                        os.unlink(f"{path}/{inner}")
                os.rmdir(path)
        os.rmdir(home)


def _readable(read: list[str]) -> list[str]:
    """What a worker may read: everything the sandbox shows but the temporary folder (its siblings' homes are
    there) and the worlds' folders, then its own world's folders, and the Python installation wherever it is (not
    the temporary folder itself, which is on ``sys.path`` as the directory ``-m`` started in)."""
    shared = tempfile.gettempdir()
    top = [f"/{entry}" for entry in os.listdir("/") if f"/{entry}" not in (shared, WORLDS_ROOT)]
    python = {os.path.realpath(path) for path in (sys.prefix, sys.base_prefix, *sys.path) if path}
    return top + read + sorted(path for path in python if path != shared and not path.startswith(CHILDREN_TMP))


def _become_worker(fd: int, service: str, read: list[str], home: str) -> None:
    from occubench.sandbox import worker

    status = 1
    try:
        os.dup2(fd, 0)
        os.dup2(fd, 1)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the zygote's protocol, its channel, the other end of the pair
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        # A session of its own, as bubblewrap gives a worker in a sandbox of its own: where the kernel groups CPU time
        # by session (autogroup), the zygote's children would otherwise share one session's time, however many start.
        os.setsid()
        os.write(1, b"c")  # its credentials, for the harness to find this process by (see the module's docstring)
        readable = _readable(read)  # before the temporary folder is its home
        tempfile.tempdir = home
        os.environ["TMPDIR"] = home
        os.chdir(home)
        landlock.restrict(readable, home)
        worker.main(service)
        status = 0
    finally:
        os._exit(status)  # never back into the zygote's loop, never its exit handlers


HANDLERS = {"preload": preload, "fork": fork, "kill": kill, "reap": reap}
