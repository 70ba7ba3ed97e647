"""Strict JSON from any value a model or a tool returns, so a record can always be written.

Models and tools hand back lone surrogates, NaN, integers too long to print, structures nested thousands deep and
megabytes of text. Each would make ``json.dumps`` fail or write something that is not JSON; here each becomes a
marked replacement instead, and the record is written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

#: Deeper structures are cut here; a 5,000-deep list would otherwise blow the recursion limit of json.dumps.
MAX_DEPTH = 64
#: Longer strings keep their head and say how much was cut.
MAX_STRING = 1_000_000
#: Integers beyond this many bits (~300 digits) become a description: Python refuses to print one over 4,300 digits.
MAX_INT_BITS = 1_000


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD: it can then be encoded as UTF-8."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _string(text: str) -> str:
    text = clean_text(text)
    if len(text) > MAX_STRING:
        return f"{text[:MAX_STRING]}…[truncated: {len(text) - MAX_STRING:,} more characters]"
    return text


def json_safe(value: Any, depth: int = 0, default: Callable[[Any], Any] = str) -> Any:
    """A copy of ``value`` that ``json.dumps(..., allow_nan=False)`` always accepts and any JSON parser reads. A
    value of no JSON type is replaced by ``default(value)``, made safe in turn (its text by default)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            return f"<integer of about {int(value.bit_length() * math.log10(2)) + 1:,} digits>"
        return int(value)  # an int subclass (an IntEnum) prints as itself
    if isinstance(value, float):
        return value if math.isfinite(value) else ("NaN" if math.isnan(value) else
                                                    "Infinity" if value > 0 else "-Infinity")
    if depth >= MAX_DEPTH:
        return f"<nested deeper than {MAX_DEPTH} levels: cut>"
    if isinstance(value, dict):
        return {(_string(key) if isinstance(key, str) else str(json_safe(key, depth + 1))):
                json_safe(item, depth + 1, default) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(item, depth + 1, default) for item in value]
    return _string(str(value)) if default is str else json_safe(default(value), depth)


def dumps(value: Any, **options: Any) -> str:
    """Strict JSON text of ``value`` (see :func:`json_safe`); never raises for what it is given."""
    return json.dumps(json_safe(value), ensure_ascii=False, allow_nan=False, **options)
