"""Reading JSON and JSON Lines files with errors that name the file and the line; writing a file whole or not at
all."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from occubench.errors import ConfigError
from occubench.util.runfiles import open_file
from occubench.util.untrusted import read_file


def json_digest(value: Any) -> str:
    """A short hash of a JSON value's content: equal values (keys in any order) hash alike."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


#: A line longer than this is not read. Every string a run writes is cut at a megabyte (occubench.util.jsonsafe)
#: and the model's context bounds an episode's observations well below it; a line parsed into Python objects takes
#: many times its bytes in memory.
MAX_LINE_BYTES = 16 << 20
#: A line nested deeper than this is not read: a run writes nothing deeper than 64 levels (jsonsafe.MAX_DEPTH), and
#: the standard parser and every walk of a value after it (json.dumps included) recurse once per level against
#: the interpreter's limit of 1,000 frames.
MAX_LINE_DEPTH = 256


class OutsizedLine(ValueError):
    """A line longer or deeper than a reader takes (:data:`MAX_LINE_BYTES`, :data:`MAX_LINE_DEPTH`)."""


def loads_line(line: bytes) -> Any:
    """``json.loads`` of one line, through orjson (a tenth of the time) when it reads it; what orjson refuses (an
    integer past 64 bits, a NaN) is read as the standard parser reads it. A line too long or too deep raises
    :class:`OutsizedLine` (a ``ValueError``, as unreadable text is), never ``RecursionError``."""
    if len(line) > MAX_LINE_BYTES:
        raise OutsizedLine(f"longer than {MAX_LINE_BYTES >> 20} MB")
    try:
        value = orjson.loads(line)  # its own limit is 1,024 levels, past which it raises without recursing
    except orjson.JSONDecodeError:
        try:
            value = json.loads(line)
        except RecursionError:
            raise OutsizedLine(f"nested deeper than {MAX_LINE_DEPTH} levels") from None
    # Brackets counted, in strings too, bound the depth: most lines need no walk.
    if line.count(b"[") + line.count(b"{") > MAX_LINE_DEPTH and _deeper(value, MAX_LINE_DEPTH):
        raise OutsizedLine(f"nested deeper than {MAX_LINE_DEPTH} levels")
    return value


def _deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` levels deep, found level by level (no recursion)."""
    level = [value] if isinstance(value, (list, dict)) else []
    for _ in range(limit):
        level = [child for item in level for child in (item.values() if isinstance(item, dict) else item)
                 if isinstance(child, (list, dict))]
        if not level:
            return False
    return True


def dumps_line(value: Any) -> bytes:
    """One JSON Lines line of a JSON-safe value (see :func:`occubench.util.jsonsafe.json_safe`), through orjson
    unless it holds an integer past 64 bits."""
    try:
        return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return (json.dumps(value, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def read_json(path: Path, what: str) -> Any:
    """The JSON value of the file at ``path``; a file that is missing, unreadable, not UTF-8 or not JSON is a
    :class:`ConfigError` naming it (and the line and column), ``what`` saying what the file was to be; so is one
    past :func:`loads_line`'s bounds (a hand-made file nested 50,000 deep), and one that is a link, not a regular
    file or too large (read as a world or data folder's files are: :mod:`occubench.util.untrusted`)."""
    if not path.exists() and not path.is_symlink():
        raise ConfigError(f"{what} not found: {path}")
    try:
        data = read_file(path)
        data.decode("utf-8")  # for the byte at fault, named below
        return loads_line(data)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except ValueError as exc:  # an integer longer than Python reads, a file too long or too deep
        raise ConfigError(f"{path}: invalid JSON: {exc}") from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line; a line that is not a UTF-8 JSON object is an error
    naming the file and the line."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise ConfigError(f"file not found: {path}") from None
    except IsADirectoryError:
        raise ConfigError(f"{path} is a directory, not a JSON Lines file") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ConfigError(f"{path}:{number}: not UTF-8 text (byte {exc.start + 1} of the line)") from None
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError as exc:  # invalid JSON, or an integer longer than Python reads
                reason = f"{exc.msg} (column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else str(exc)
                raise ConfigError(f"{path}:{number}: invalid JSON: {reason}") from None
            if not isinstance(value, dict):
                raise ConfigError(f"{path}:{number}: expected a JSON object, got {type(value).__name__}")
            yield number, value


def write_atomic(path: Path, data: str | bytes) -> None:
    """``data`` (text as UTF-8) into ``path``, whole or not at all: an interrupted write leaves the old file (or
    none), and a failed one no temporary file. Writers in other threads or processes each use their own temporary
    file, never through a symbolic link (:func:`occubench.util.runfiles.open_file`); a link at ``path`` itself is
    replaced, never written through. A failure is a :class:`ConfigError` naming ``path``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = open_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    except FileNotFoundError:
        raise ConfigError(f"cannot write {path}: its folder {path.parent} does not exist") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)  # gone once replaced; left by a failure otherwise
