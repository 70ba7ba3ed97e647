"""Reading JSON Lines with errors that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from occubench.errors import ConfigError


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line; a line that is not a JSON object is an error."""
    try:
        handle = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"file not found: {path}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{number}: invalid JSON: {exc.msg} (column {exc.colno})") from None
            if not isinstance(value, dict):
                raise ConfigError(f"{path}:{number}: expected a JSON object, got {type(value).__name__}")
            yield number, value
