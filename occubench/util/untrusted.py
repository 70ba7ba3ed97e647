"""The one way the harness reads a folder it did not make: a world folder, a data folder, what synthesis wrote.

Such a folder comes from anyone, and the harness lists and reads it (a run's identity is a hash of its files; a
data folder is checked against its checksums). So it is read as data under four rules, each broken one a
:class:`ConfigError` naming the file:

- no symbolic link anywhere in it (a link could name any file the user can read: a key, ``/etc/shadow``);
- regular files and folders only (a FIFO would block the read, a device never end it);
- at most :data:`MAX_FILE_BYTES` per file, :data:`MAX_FOLDER_BYTES` and :data:`MAX_FILES` files and folders
  per folder;
- files read in chunks, never whole (a sparse 8 GB file costs a stat, not 8 GB of memory).

Files are opened with ``O_NOFOLLOW`` and checked on the open descriptor, so what is read is what was checked. A
bytecode cache (``__pycache__``) is neither listed nor read: the worker compiles a world from its source.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from occubench.errors import ConfigError

#: The largest file of a folder the harness reads (a world's seed SQL, a data file): the worker's own file limit.
MAX_FILE_BYTES = 64 << 20
#: All the files of one folder together, and how many files and folders it may hold.
MAX_FOLDER_BYTES, MAX_FILES = 1 << 30, 10_000
_CHUNK = 1 << 20
_CACHE = "__pycache__"
_LINK = "a symbolic link; a world or data folder may hold none (it could name any file of yours)"


def folder_files(folder: Path, prefix: str = "") -> dict[str, Path]:
    """Every file under ``folder`` by its path relative to it (after ``prefix``), sorted, bytecode caches left out;
    a :class:`ConfigError` for a link, a file that is not regular, or a folder past the limits."""
    found: dict[str, Path] = {}
    total = entries = 0
    pending = [folder]
    while pending:
        directory = pending.pop()
        for entry in _entries(directory):
            path = Path(entry.path)
            entries += 1  # folders count too: a million empty ones would take as long to walk
            if entry.is_dir(follow_symlinks=False):
                if entry.name != _CACHE:
                    pending.append(path)
            else:
                total += _checked(path, entry.stat(follow_symlinks=False))
                found[prefix + path.relative_to(folder).as_posix()] = path
            if entries > MAX_FILES or total > MAX_FOLDER_BYTES:
                raise ConfigError(f"{folder}: more than {MAX_FILES:,} files and folders or {MAX_FOLDER_BYTES >> 20:,} "
                                  "MB in all; a world or data folder may hold no more")
    return dict(sorted(found.items()))


def _entries(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as entries:
            return list(entries)
    except OSError as exc:
        raise ConfigError(f"{directory}: cannot list it ({exc.strerror})") from None


def check_file(path: Path) -> int:
    """The size of the file ``path`` names, a :class:`ConfigError` unless it is a regular file (not a link) within
    the limit; looked at, not read."""
    try:
        return _checked(path, path.lstat())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror})") from None


def _checked(path: Path, status: os.stat_result, limit: int = MAX_FILE_BYTES) -> int:
    if stat.S_ISLNK(status.st_mode):
        raise ConfigError(f"{path}: {_LINK}")
    if stat.S_ISDIR(status.st_mode):
        raise ConfigError(f"{path}: is a directory, not a file")
    if not stat.S_ISREG(status.st_mode):
        raise ConfigError(f"{path}: not a regular file (a world or data folder holds files and folders only)")
    return _within(path, status.st_size, limit)


def _within(path: Path, size: int, limit: int = MAX_FILE_BYTES) -> int:
    if size > limit:
        raise ConfigError(f"{path}: {size:,} bytes; a file of a world or data folder may have at most "
                          f"{limit >> 20} MB")
    return size


def read_chunks(path: Path, limit: int = MAX_FILE_BYTES) -> Iterator[bytes]:
    """The bytes of the regular file ``path``, in chunks, under the rules above (checked on the open file); a file
    itself named as a link is refused too, a link among the folders above it is the caller's to rule out.
    ``limit`` replaces :data:`MAX_FILE_BYTES` for a file known to be larger (a dataset's JSON Lines)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO does not block this
    except OSError as exc:
        reason = _LINK if os.path.islink(path) else f"cannot read it ({exc.strerror})"  # ELOOP, or EMLINK on BSDs
        raise ConfigError(f"{path}: {reason}") from None
    try:
        _checked(path, os.fstat(fd), limit)  # before open(), which refuses a folder with its own error
    except BaseException:
        os.close(fd)
        raise
    with open(fd, "rb", buffering=0, closefd=True) as handle:
        read = 0
        try:
            while chunk := handle.read(_CHUNK):
                read = _within(path, read + len(chunk), limit)  # a file grown past the limit since its stat
                yield chunk
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read it ({exc.strerror})") from None


def read_file(path: Path) -> bytes:
    """The whole content of a file under the rules above (at most :data:`MAX_FILE_BYTES`)."""
    return b"".join(read_chunks(path))
