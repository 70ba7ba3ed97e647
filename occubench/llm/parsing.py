"""Pull the JSON object a model was asked to put inside ``<tag>...</tag>`` out of its reply."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def extract_tagged_json(text: str | None, tag: str) -> dict[str, Any]:
    """Return the JSON object in the last ``<tag>`` block of ``text``.

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
        value = json.loads(body)
    except ValueError:  # invalid JSON, or an integer longer than Python will read
        # Stray words around the object: fall back to the outermost braces.
        first, last = body.find("{"), body.rfind("}")
        try:
            value = json.loads(body[first:last + 1]) if 0 <= first < last else None
        except ValueError as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise ValueError(f"the text inside {opening} is not valid JSON ({reason})") from None
    if not isinstance(value, dict):
        raise ValueError(f"the text inside {opening} is not one JSON object")
    return value
