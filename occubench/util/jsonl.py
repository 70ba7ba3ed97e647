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


def json_digest(value: Any) -> str:
    """A short hash of a JSON value's content: equal values (keys in any order) hash alike."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def loads_line(line: bytes | str) -> Any:
    """``json.loads`` of one line, through orjson (a tenth of the time) when it reads it; what orjson refuses (an
    integer past 64 bits, a NaN) is read as the standard parser reads it."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def dumps_line(value: Any) -> bytes:
    """One JSON Lines line of a JSON-safe value (see :func:`occubench.util.jsonsafe.json_safe`), through orjson
    unless it holds an integer past 64 bits."""
    try:
        return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return (json.dumps(value, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def read_json(path: Path, what: str) -> Any:
    """The JSON value of the file at ``path``; a file that is missing, unreadable, not UTF-8 or not JSON is a
    :class:`ConfigError` naming it (and the line and column), ``what`` saying what the file was to be."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except ValueError as exc:  # an integer longer than Python reads
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
    none). Writers in other threads or processes each use their own temporary file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    os.replace(tmp, path)
