"""One run at a time in a directory: an advisory lock the kernel drops when its process dies.

Two identical commands started at once would each pay for every task and write it twice. The lock is an
``flock`` on ``run.lock`` in the directory: a second run refuses at once, naming the process that holds it; a lock
left by a process killed with ``kill -9`` is released by the kernel, so the next run simply takes it over.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from types import TracebackType

from occubench.errors import ConfigError
from occubench.util.runfiles import open_file

LOCK_FILE = "run.lock"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock; runs there are not guarded
    fcntl = None  # type: ignore[assignment]


class DirectoryLock:
    def __init__(self, directory: Path, what: str = "run") -> None:
        self.path = directory / LOCK_FILE
        self.what = what
        self._fd: int | None = None
        #: The holder before us, when it died without releasing (its pid), for a note to the user.
        self.taken_over: int | None = None

    def acquire(self) -> DirectoryLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the {self.what} directory {self.path.parent}: {exc.strerror}") from None
        fd = open_file(self.path, os.O_RDWR | os.O_CREAT)  # a link planted here would have its target truncated
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = _read(fd)
                os.close(fd)
                who = (f"process {holder.get('pid')} on {holder.get('host')} ({holder.get('command')})"
                       if holder else "another process")
                raise ConfigError(f"{self.path.parent} is in use by {who}: wait for that {self.what} to finish, "
                                  "or choose another --run-name / output directory") from None
        pid = _read(fd).get("pid")
        if isinstance(pid, int) and pid != os.getpid():
            self.taken_over = pid
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": time.time(),
                                  "command": " ".join(sys.argv[:1] + sys.argv[1:2])}).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)  # an empty file: nobody to take over from
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> DirectoryLock:
        return self.acquire()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def _read(fd: int) -> dict[str, object]:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
