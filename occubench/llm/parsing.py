"""Pull the JSON object a model was asked to put inside ``<tag>...</tag>`` out of its reply."""

from __future__ import annotations

import json
import re
from typing import Any

from occubench._jsonsafe import json_safe

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def _int(text: str) -> int | str:
    # Python refuses to read an integer of more than 4,300 digits; a model's 5,000-digit number stays its digits.
    return int(text) if len(text) <= 4_000 else text


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
    body = _FENCE.sub("", (body if end < 0 else body[:end]).strip())
    try:
        value = json.loads(body, parse_int=_int)
    except ValueError:  # invalid JSON, or an integer longer than Python will read
        # Stray words around the object: fall back to the outermost braces.
        first, last = body.find("{"), body.rfind("}")
        try:
            value = json.loads(body[first:last + 1], parse_int=_int) if 0 <= first < last else None
        except ValueError as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise ValueError(f"the text inside {opening} is not valid JSON ({reason})") from None
    if not isinstance(value, dict):
        raise ValueError(f"the text inside {opening} is not one JSON object")
    return json_safe(value)  # NaN and the like would be refused when the object is sent back to a model
