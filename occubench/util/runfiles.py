"""Files in a folder the harness writes (a run folder), opened without following a symbolic link planted there.

A link named ``results.jsonl`` that points elsewhere would have every result appended to whatever it names, and a
``run.lock`` pointing at a file of the user's would have it truncated. The folder itself may be a link (one the
user made, or ``--output-dir`` on another disk): only the last part of a path is never followed. Each refusal is a
:class:`ConfigError` naming the file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from occubench.errors import ConfigError

# O_NONBLOCK: a FIFO planted under a file's name is opened without waiting for a writer, then refused below.
_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def open_file(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of the regular file at ``path``, never through a symbolic link. A missing file raises
    ``FileNotFoundError`` as ``os.open`` does; a link, a folder, a FIFO or a device, or a file that cannot be
    opened, is a :class:`ConfigError` naming it."""
    try:
        fd = os.open(path, flags | _FLAGS, mode)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"{path} is a symbolic link: files in a run folder are never followed (it could "
                              "point anywhere); remove it and run again") from None
        raise ConfigError(f"cannot open {path}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfigError(f"{path} is not a regular file")
    return fd


def read_file(path: Path) -> bytes | None:
    """The bytes of the regular file at ``path`` (see :func:`open_file`); None if there is none."""
    try:
        fd = open_file(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    with open(fd, "rb") as handle:
        return handle.read()
