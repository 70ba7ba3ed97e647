"""What several families do alike: check the config's arguments, read what the agent left in its workspace (a file
it may have written anywhere, in any shape), write a generated file, and shorten an agent's value for a note."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Collection, Mapping
from datetime import datetime, time
from pathlib import Path
from typing import Any

from occubench.errors import ConfigError
from occubench.traineebench.family import Day
from occubench.util import untrusted

#: Every task of the reference's configs is due at 20:00 on the day it is given.
DEADLINE = time(20, 0)


def deadline(day: Day) -> datetime:
    return datetime.combine(day.start.date(), DEADLINE)


def known_arguments(family: str, arguments: Mapping[str, Any], known: Collection[str]) -> None:
    """A :class:`ConfigError` naming the first argument the family does not take."""
    for name in arguments:
        if name not in known:
            raise ConfigError(f"{family}: unknown argument {name!r} (it takes {', '.join(sorted(known)) or 'none'})")


def bad_argument(family: str, name: str, expected: str, value: object) -> ConfigError:
    return ConfigError(f"{family}: argument {name!r} must be {expected}, not {brief(value)}")


def brief(value: object, limit: int = 80) -> str:
    """``value`` as a note or a message shows it: an agent's answer can be megabytes long."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}…"


def write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)


def find(workspace: Path, name: str) -> Path | None:
    """The first file named ``name`` in the workspace, its top folder first, then each folder below in name order
    (the reference looks for an agent's output wherever in the workspace it was saved)."""
    for folder, folders, files in os.walk(workspace):
        folders.sort()
        if name in files:
            return Path(folder) / name
    return None


def read(path: Path | None) -> bytes | None:
    """The file's bytes; None when there is none, or it is a link, not a regular file, or past the size limit."""
    if path is None:
        return None
    try:
        # untrusted refuses links, FIFOs and oversized files; a folder it would fail to open, so it is ruled out here
        return untrusted.read_file(path) if stat.S_ISREG(path.lstat().st_mode) else None
    except (ConfigError, OSError):
        return None


def read_json(path: Path | None) -> Any:
    """The JSON in the file; None when there is no file or it is not JSON (NaN and Infinity parse, as in Python)."""
    data = read(path)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
