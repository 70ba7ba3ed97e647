"""The pipe protocol between the harness and a sandbox worker: small, versioned, one request at a time.

Each message is a 4-byte big-endian length and that many bytes of UTF-8 JSON. The harness opens with ``start``
(the protocol version, the limits and the worker's system-call filter); the worker installs them and answers with
its own version before it serves anything. Then each request ``{"op": name, "args": {...}}`` gets one
reply: ``{"ok": result, "cpu": seconds used so far}``, or ``{"error": {"kind": ..., "message": ...}, "cpu": ...}``
where kind is ``refused`` (the request's world or arguments are at fault: a configuration error), ``timeout``,
``memory`` or ``failed`` (the handler raised something else).
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

from occubench.util.jsonsafe import dumps

#: Changes whenever a message changes shape; a worker of another version is refused.
VERSION = 1
#: The largest message either side accepts (a reply holds at most a tool's observation or a world's description).
MAX_MESSAGE = 64 << 20
_HEADER = struct.Struct(">I")


class ProtocolError(Exception):
    """A message that is not one of this protocol's."""


def encode(message: Any) -> bytes:
    body = dumps(message).encode()
    if len(body) > MAX_MESSAGE:
        raise ProtocolError(f"a message of {len(body):,} bytes (at most {MAX_MESSAGE:,})")
    return _HEADER.pack(len(body)) + body


def length(header: bytes) -> int:
    (size,) = _HEADER.unpack(header)
    if size > MAX_MESSAGE:
        raise ProtocolError(f"a message of {size:,} bytes announced (at most {MAX_MESSAGE:,})")
    return int(size)


def decode(body: bytes) -> Any:
    """The message's JSON value: strict JSON (NaN and infinities, which no side sends, are refused where Python's
    parser would otherwise read them: ``NaN``, ``Infinity``, ``1e999``)."""
    try:
        return json.loads(body, parse_constant=_not_json, parse_float=_finite)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise ProtocolError(f"a message that is not JSON: {exc}") from None


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is past a float's range")
    return value


HEADER_SIZE = _HEADER.size
