"""Read JSON a model wrote: the object it was asked to put inside ``<tag>...</tag>``, and any other JSON text that
comes from a model (tool-call arguments, a chat-completion body) through :func:`loads`, whose nesting is bounded."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from occubench.util.jsonsafe import json_safe

#: Deepest nesting read from a model. Real replies are a few levels deep. Python's parser, and every walk of the
#: value after it (schema checks, json.dumps), recurse once per level against the interpreter's limit of 1,000
#: frames, part of which the caller's stack already uses: 256 leaves them ample room. Deeper text is refused before
#: it is parsed, as unreadable as any other garbage. (What is written is cut further, at 64: occubench.util.jsonsafe.)
MAX_DEPTH = 256
_BRACKET = re.compile(r"[\[\]{}]")


def too_deep(text: str) -> bool:
    """Whether the JSON in ``text`` nests objects and arrays more than :data:`MAX_DEPTH` levels deep."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:  # the usual case, settled without a scan
        return False
    depth = 0
    for bracket in _BRACKET.findall(_outside_strings(text)):  # brackets inside strings do not nest
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_DEPTH:
            return True
    return False


def _outside_strings(text: str) -> str:
    """``text`` without its JSON strings, each from a quote to the next quote not escaped by a backslash. A string
    left open keeps the rest of the text: no later quote could close one either. (Found with ``str.find``, in one
    pass: a regular expression restarted at every escaped quote of an open string, quadratic in their number.)"""
    kept: list[str] = []
    position = 0
    while (opening := text.find('"', position)) >= 0:
        quote = opening
        while True:
            previous, quote = quote, text.find('"', quote + 1)
            if quote < 0:
                return "".join(kept) + text[position:]
            between = text[previous + 1:quote]
            if (len(between) - len(between.rstrip("\\"))) % 2 == 0:  # an even run of backslashes escapes itself
                break
        kept.append(text[position:opening])
        position = quote + 1
    return "".join(kept) + text[position:]


def loads(text: str | bytes, **options: Any) -> Any:
    """``json.loads`` for what a model sent: nesting beyond :data:`MAX_DEPTH` raises ``ValueError`` like any other
    unreadable text, never ``RecursionError``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")  # a UnicodeDecodeError is a ValueError too
    if too_deep(text):
        raise ValueError(f"the JSON is nested more than {MAX_DEPTH} levels deep")
    try:
        return json.loads(text, **options)
    except RecursionError:  # within the bound, yet called from a stack already near the interpreter's limit
        raise ValueError("the JSON is nested too deep to read here") from None


def loads_body(data: bytes) -> Any:
    """:func:`loads` for a response body, through ``orjson`` when it is plainly shallow (its brackets alone cannot
    nest past :data:`MAX_DEPTH`): a tenth of the standard parser's time. What ``orjson`` refuses (a lone surrogate
    escape, an integer past 64 bits) goes through :func:`loads`, which reads it as before."""
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return loads(data)


def _int(text: str) -> int | str:
    # Python refuses to read an integer of more than 4,300 digits; a model's 5,000-digit number stays its digits.
    return int(text) if len(text) <= 4_000 else text


def _unfenced(body: str) -> str:
    """``body`` (stripped) without a Markdown code fence around it: three backticks, perhaps then ``json``. String
    methods, not a regular expression: that one took time quadratic in a run of spaces inside the body."""
    if body.startswith("```"):
        body = body[3:].removeprefix("json").lstrip()
    return body[:-3].rstrip() if body.endswith("```") else body


def extract_tagged_json(text: str | None, tag: str) -> dict[str, Any]:
    """Return the JSON object in the last ``<tag>`` block of ``text``, made strict JSON (see ``json_safe``).

    Tolerates a missing closing tag (a reply cut short) and a Markdown code fence inside the tags. Raises
    ``ValueError`` with a reason fit to send back to the model when there is no usable object.
    """
    if not text:
        raise ValueError("the reply was empty")
    opening, closing = f"<{tag}>", f"</{tag}>"
    start = text.rfind(opening)
    if start < 0:
        raise ValueError(f"the reply has no {opening} tag")
    body = text[start + len(opening):]
    end = body.find(closing)
    body = _unfenced((body if end < 0 else body[:end]).strip())
    try:
        value = loads(body, parse_int=_int)
    except ValueError:  # invalid JSON, nested too deep, or an integer longer than Python will read
        # Stray words around the object: fall back to the outermost braces.
        first, last = body.find("{"), body.rfind("}")
        try:
            value = loads(body[first:last + 1], parse_int=_int) if 0 <= first < last else None
        except ValueError as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise ValueError(f"the text inside {opening} is not valid JSON ({reason})") from None
    if not isinstance(value, dict):
        raise ValueError(f"the text inside {opening} is not one JSON object")
    return json_safe(value)  # NaN and the like would be refused when the object is sent back to a model
