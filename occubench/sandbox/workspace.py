"""A shell-bearing workspace's folders as the harness handles them: copied between the host and a command's
size-limited file system within a quota, walked, measured and removed, whatever an agent left in them.

An agent's commands can leave anything: folders thousands deep, names at the length limit, millions of entries,
sparse files, hard links, links, FIFOs, folders without permissions. So nothing here recurses, follows a link or
builds a long path: folders are opened one at a time relative to an open folder, with ``O_NOFOLLOW``; a walk stops
at :data:`MAX_DEPTH` levels and :data:`MAX_ENTRIES` files and folders; a copy (:func:`mirror`) counts a file's
bytes as the pages it fills once written (a sparse or hard-linked file costs its full size on the host) and keeps
regular files, folders and links only.
"""

from __future__ import annotations

import os
import resource
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from occubench.errors import AgentOutputError

#: Files and folders of a workspace, and levels of folders under its root, that the harness copies or walks.
MAX_ENTRIES, MAX_DEPTH = 10_000, 64
_PAGE = resource.getpagesize()
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def cost(status: os.stat_result) -> int:
    """What an entry takes of a quota: a file the pages its bytes fill written out, a link one page (tmpfs keeps a
    long target in a page of its own), a folder nothing (it counts against :data:`MAX_ENTRIES`)."""
    if stat.S_ISREG(status.st_mode):
        return -(-status.st_size // _PAGE) * _PAGE
    return _PAGE if stat.S_ISLNK(status.st_mode) else 0


def walk(root: Path) -> Iterator[tuple[Path, list[os.DirEntry[str]]]]:
    """Each folder under ``root`` (``root`` first, then each subfolder in name order, depth first, as ``os.walk``
    goes) with its entries sorted by name; links are entries, never followed. An :class:`AgentOutputError` past
    :data:`MAX_DEPTH` levels or :data:`MAX_ENTRIES` entries, or for a folder that cannot be listed."""
    seen = 0
    pending = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = []
                for entry in listing:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        raise AgentOutputError(f"{root}: more than {MAX_ENTRIES:,} files and folders")
                    entries.append(entry)
        except OSError as exc:
            raise AgentOutputError(f"{root}: a folder {depth} levels down cannot be listed ({exc.strerror})") from None
        entries.sort(key=lambda entry: entry.name)
        yield folder, entries
        below = [entry for entry in entries if entry.is_dir(follow_symlinks=False)]
        if below and depth == MAX_DEPTH:
            raise AgentOutputError(f"{root}: folders more than {MAX_DEPTH} levels deep")
        pending += [(Path(entry.path), depth + 1) for entry in reversed(below)]


def usage(root: Path) -> int:
    """What the files and links under ``root`` take of its quota (:func:`cost`); as :func:`walk` past its limits."""
    return sum(cost(entry.stat(follow_symlinks=False)) for _, entries in walk(root) for entry in entries)


def mirror(source: int, target: int, quota: int) -> str:
    """Make the folder open as ``target`` hold what the folder open as ``source`` holds: folders, regular files
    (their bytes, whether executable, their modification time; one unchanged in size and time is left as it is)
    and links, anything else left out. What would take ``target`` past ``quota`` bytes (:func:`cost`),
    :data:`MAX_ENTRIES` entries or :data:`MAX_DEPTH` levels is left out. Returns what was left out, "" for
    nothing."""
    budget = _Budget(quota)
    pending: list[tuple[str, ...]] = [()]
    while pending and budget.entries <= MAX_ENTRIES:
        parts = pending.pop()
        try:
            here = _open(source, parts)
        except PermissionError:  # a folder its agent made unreadable: its copy stays as it was
            budget.left_out.append("folders without read permission")
            continue
        there = _open(target, parts)
        try:
            pending += [(*parts, name) for name in _mirror_folder(here, there, len(parts), budget)]
        finally:
            os.close(here)
            os.close(there)
    if budget.entries > MAX_ENTRIES:
        budget.left_out.append(f"files and folders past {MAX_ENTRIES:,}")
    return "; ".join(dict.fromkeys(budget.left_out))


@dataclass
class _Budget:
    quota: int
    used: int = 0
    entries: int = 0
    left_out: list[str] = field(default_factory=list)


def _mirror_folder(here: int, there: int, depth: int, budget: _Budget) -> list[str]:
    """One folder of :func:`mirror`: its files and links copied, what ``there`` holds beyond them removed; the
    subfolders to mirror next (made in ``there``)."""
    listing = _listing(here, MAX_ENTRIES - budget.entries + 1)
    budget.entries += len(listing)
    if budget.entries > MAX_ENTRIES:
        return []  # a listing cut short: what it did not reach is neither copied nor removed
    kept, below = set(), []
    for name, status in sorted(listing.items()):
        if stat.S_ISDIR(status.st_mode) and depth < MAX_DEPTH:
            _make_folder(there, name)
            below.append(name)
        elif stat.S_ISDIR(status.st_mode):
            budget.left_out.append(f"folders more than {MAX_DEPTH} levels deep")
            continue
        elif not (stat.S_ISREG(status.st_mode) or stat.S_ISLNK(status.st_mode)):
            continue  # a FIFO, a socket: nothing a day's work needs
        elif budget.used + cost(status) > budget.quota:
            budget.left_out.append(f"files past {budget.quota >> 20} MB")
            continue
        else:
            try:
                _copy_entry(here, there, name, status)
            except PermissionError:
                budget.left_out.append("files without read permission")
                continue
            budget.used += cost(status)
        kept.add(name)
    for name in set(os.listdir(there)) - kept:
        remove_at(there, name)
    return below[::-1]  # popped last first: name order


def _open(root: int, parts: tuple[str, ...]) -> int:
    """The folder ``parts`` under the open folder ``root``, opened one level at a time, no link followed."""
    folder = os.dup(root)
    for part in parts:
        try:
            inner = os.open(part, _DIRECTORY, dir_fd=folder)
        finally:
            os.close(folder)
        folder = inner
    return folder


def _listing(folder: int, most: int) -> dict[str, os.stat_result]:
    """The entries of the open ``folder``, at most ``most`` of them, by name."""
    found = {}
    with os.scandir(folder) as listing:
        for entry in listing:
            found[entry.name] = entry.stat(follow_symlinks=False)
            if len(found) == most:
                break
    return found


def _make_folder(folder: int, name: str) -> None:
    try:
        if stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
            return
        remove_at(folder, name)
    except FileNotFoundError:
        pass
    os.mkdir(name, 0o700, dir_fd=folder)


def _copy_entry(here: int, there: int, name: str, status: os.stat_result) -> None:
    try:
        old = os.stat(name, dir_fd=there, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    if stat.S_ISLNK(status.st_mode):
        link = os.readlink(name, dir_fd=here)
        if old is not None and stat.S_ISLNK(old.st_mode) and os.readlink(name, dir_fd=there) == link:
            return
        if old is not None:
            remove_at(there, name)
        os.symlink(link, name, dir_fd=there)
        return
    if old is not None and stat.S_ISREG(old.st_mode) and (old.st_size, old.st_mtime_ns) == \
            (status.st_size, status.st_mtime_ns):
        return
    reader = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=here)
    try:
        if old is not None:
            remove_at(there, name)
        writer = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o700 if status.st_mode & 0o111 else 0o600, dir_fd=there)
        try:
            left = status.st_size  # as listed: a file that grew since is cut there, the quota counted it so
            while left > 0 and (sent := os.sendfile(writer, reader, None, min(left, 1 << 24))):
                left -= sent
            os.utime(writer, ns=(status.st_atime_ns, status.st_mtime_ns))
        finally:
            os.close(writer)
    finally:
        os.close(reader)


def remove(path: Path) -> None:
    """Remove ``path``, and when it is a folder everything in it, however deep or odd (see :func:`remove_at`);
    nothing when it does not exist."""
    parent = os.open(path.parent, _DIRECTORY & ~os.O_NOFOLLOW)
    try:
        remove_at(parent, path.name)
    finally:
        os.close(parent)


def remove_at(folder: int, name: str) -> None:
    """Remove the entry ``name`` of the open ``folder``, a folder with everything in it: one folder open at a
    time (a chain of folders thousands deep needs neither recursion nor thousands of descriptors nor a long path),
    each made writable first (an agent may have taken its permissions away), the way back up checked to be the way
    down."""
    try:
        os.unlink(name, dir_fd=folder)
        return
    except FileNotFoundError:
        return
    except (IsADirectoryError, PermissionError):
        pass  # Linux refuses unlink on a folder with EISDIR, POSIX allows EPERM
    # Each level on the way down: its name, its parent's identity, the subfolders it still holds.
    trail: list[tuple[str, tuple[int, int], list[str]]] = []
    current, name_here = os.dup(folder), name
    try:
        while True:
            identity = _identity(current)
            inner = _writable(current, name_here)
            os.close(current)
            current = inner
            trail.append((name_here, identity, _clear_files(current)))
            while trail and not trail[-1][2]:
                done, parent, _ = trail.pop()
                up = os.open("..", _DIRECTORY, dir_fd=current)
                os.close(current)
                current = up
                if _identity(current) != parent:
                    raise OSError(f"{done}: its folder moved while it was being removed")
                os.rmdir(done, dir_fd=current)
            if not trail:
                return
            name_here = trail[-1][2].pop()
    finally:
        os.close(current)


def _identity(folder: int) -> tuple[int, int]:
    status = os.fstat(folder)
    return status.st_dev, status.st_ino


def _writable(folder: int, name: str) -> int:
    """The subfolder ``name`` of ``folder``, opened, with its owner's permissions to list and change it."""
    try:
        inner = os.open(name, _DIRECTORY, dir_fd=folder)
    except PermissionError:
        os.chmod(name, 0o700, dir_fd=folder)  # listed as a folder (not a link) a moment ago
        inner = os.open(name, _DIRECTORY, dir_fd=folder)
    os.fchmod(inner, 0o700)
    return inner


def _clear_files(folder: int) -> list[str]:
    """Unlink every entry of the open ``folder`` but its subfolders; their names."""
    subfolders = []
    with os.scandir(folder) as listing:
        for entry in listing:
            if entry.is_dir(follow_symlinks=False):
                subfolders.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=folder)
    return subfolders
