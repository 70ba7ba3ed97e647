"""The pipe protocol between the harness and a sandbox worker: small, versioned, one request at a time.

Each message is a 4-byte big-endian length and that many bytes of UTF-8 JSON. The harness opens with ``start``
(the protocol version, the limits and the worker's system-call filter); the worker installs them and answers with
its own version before it serves anything. Then each request ``{"op": name, "args": {...}}`` gets one
reply: ``{"ok": result, "cpu": seconds used so far, "seq": n}``, or ``{"error": {"kind": ..., "message": ...},
"cpu": ..., "seq": n}``, ``n`` the request's own ``"seq"`` (a reply that is not the answer to the request just sent
is refused: world code that wrote a reply of its own cannot make the worker answer the next request with it)
where kind is ``refused`` (the request's world or arguments are at fault: a configuration error), ``timeout``,
``memory``, ``exhausted`` (the world ran out of a resource of its sandbox: disk, processes, threads, files) or
``failed`` (the handler raised something else).

The harness reads a reply as data it does not trust: world code past the allow-list can write to the protocol's
descriptor itself. So each reply is held to its request's :class:`Bound` (bytes, values, nesting) before Python
builds any object of it: an oversized length is refused before a byte of the body is read, and the body's values
and nesting are counted on its bytes before it is decoded. Building a JSON value holds the
interpreter's lock for as long as it takes, so what one reply can cost every other thread of the harness is what
its bound lets it cost.
"""

from __future__ import annotations

import itertools
import json
import math
import struct
from dataclasses import dataclass
from typing import Any

from occubench.util.jsonsafe import dumps

#: Changes whenever a message changes shape; a worker of another version is refused.
VERSION = 2
#: The largest message either side sends (a request holds at most a tool's arguments or a job of synthesis's).
MAX_MESSAGE = 64 << 20
_HEADER = struct.Struct(">I")


@dataclass(frozen=True)
class Bound:
    """The most a reply may hold: bytes of JSON, values (the reply, and each item of an array or member of an object
    in it) and levels of nesting."""

    bytes: int
    values: int
    depth: int = 96  # the boundary's own cap (64) and the protocol's envelope, with room: refused there, by name


#: What a reply to each request may hold. Measured from the replies the built-in executable worlds (loaded as an
#: outside folder) and the AWM sample send while validated: a world's description with its seeded database at most
#: 44 KB and 1,806 values, a tool's observation 5.8 KB and 320 values, checks with their diff 2.7 KB and 156 values,
#: anything else under 500 bytes. A tool's observation goes into an agent's context, which holds a few megabytes
#: of text at most; a database as data (a description, a diff, a state) is given 180 times the largest seen in
#: bytes and 50 times in values. At these bounds a reply is counted and decoded in a tenth of a second or less, and
#: checked at the boundary in at most about 5 s (jsonschema, which lets other threads run), within each request's
#: deadline: ``benchmarks/bench_replies.py``.
CALL = Bound(4 << 20, 200_000)
DATABASE = Bound(8 << 20, 100_000)
SMALL = Bound(1 << 20, 50_000)
BOUNDS = {"call": CALL, "load": DATABASE, "verify": DATABASE, "diff": DATABASE, "state": DATABASE,
          # synthesis's probes: a world's problems, its seed's failed rows, its tools' schemas
          "run": DATABASE}


def bound(op: str) -> Bound:
    """What a reply to ``op`` may hold (:data:`SMALL` for any request not in :data:`BOUNDS`)."""
    return BOUNDS.get(op, SMALL)


class ProtocolError(Exception):
    """A message that is not one of this protocol's."""


def encode(message: Any) -> bytes:
    body = dumps(message).encode()
    if len(body) > MAX_MESSAGE:
        raise ProtocolError(f"a message of {len(body):,} bytes (at most {MAX_MESSAGE:,})")
    return _HEADER.pack(len(body)) + body


def length(header: bytes, most: int = MAX_MESSAGE) -> int:
    """The length ``header`` announces: a :class:`ProtocolError` past ``most``, before the body is read."""
    (size,) = _HEADER.unpack(header)
    if size > most:
        raise ProtocolError(f"a message of {size:,} bytes announced (at most {most:,})")
    return int(size)


_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_LEVELS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 and -1 as signed bytes


def decode(body: bytes, within: Bound | None = None) -> Any:
    """The message's JSON value: strict JSON (NaN and infinities, which no side sends, are refused where Python's
    parser would otherwise read them: ``NaN``, ``Infinity``, ``1e999``), and, ``within`` a bound, refused before
    it is built when it holds more (see :func:`values` and :func:`depth`)."""
    if within is not None:
        if (found := values(body)) > within.values:
            raise ProtocolError(f"a reply of up to {found:,} values (at most {within.values:,})")
        if (found := depth(body)) > within.depth:
            raise ProtocolError(f"a reply nested up to {found:,} levels deep (at most {within.depth})")
    try:
        return json.loads(body, parse_constant=_not_json, parse_float=_finite)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise ProtocolError(f"a message that is not JSON: {exc}") from None


def values(body: bytes) -> int:
    """At most how many values the JSON text ``body`` holds, counted on its bytes in a few milliseconds a megabyte:
    every value but the first of each array or object follows a comma. Commas and brackets inside strings count
    too: an overcount for text full of commas (an exact count, skipping strings, took up to a second a megabyte,
    holding the interpreter's lock as decoding does)."""
    return body.count(b",") + body.count(b"[") + body.count(b"{") + 1


def depth(body: bytes) -> int:
    """How deep the JSON text ``body`` nests, from its brackets (those inside strings too: a string of unbalanced
    brackets moves the count, which the boundary's own check of the decoded value corrects)."""
    levels = memoryview(body.translate(_LEVELS, _NOT_BRACKETS)).cast("b")
    return max(itertools.accumulate(levels), default=0)


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is past a float's range")
    return value


HEADER_SIZE = _HEADER.size
