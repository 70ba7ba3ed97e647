"""What the largest reply each bound lets through costs the harness: counting it on its bytes, decoding it, and
checking it at the boundary (seconds each, and the peak resident memory of decoding), beside what the 64 MiB reply
a world once wrote past its encoder would cost without a bound. One process; run ``python benchmarks/bench_replies.py``.

Counting and decoding hold the interpreter's lock for their whole length; the boundary's check (jsonschema, in
Python) lets other threads run."""

from __future__ import annotations

import json
import time
from pathlib import Path

from occubench.sandbox import protocol
from occubench.sandbox.boundary import problem


def _lists(size: int) -> bytes:
    return b'{"ok":[' + b"[]," * (size // 3 - 4) + b"[]]}"


def _rows(values: int) -> bytes:
    """A state diff of about ``values`` values, as a database reply holds one."""
    rows = [{"id": n, "name": f"row {n}", "amount": 1.5, "note": None} for n in range(values // 5)]
    return json.dumps({"ok": {"t": {"inserted": rows, "deleted": [], "updated": []}}, "cpu": 0}).encode()


def _peak() -> int:
    return int(next(line for line in open("/proc/self/status") if line.startswith("VmHWM")).split()[1]) << 10


def _timed(label: str, body: bytes, bound: protocol.Bound | None, kind: str | None) -> None:
    Path("/proc/self/clear_refs").write_text("5")
    started = time.perf_counter()
    counted = (protocol.values(body), protocol.depth(body)) if bound is not None else (0, 0)
    measured = time.perf_counter()
    value = json.loads(body)
    decoded = time.perf_counter()
    peak = _peak()
    fits = bound is None or (len(body) <= bound.bytes and counted[0] <= bound.values)
    if kind is not None:
        problem(kind, value["ok"])
    checked = time.perf_counter() - decoded
    print(f"{label:42} {len(body) / (1 << 20):5.1f} MiB {counted[0]:>9,} values  fits {fits!s:5}  count "
          f"{measured - started:5.2f} s  decode {decoded - measured:5.2f} s  check {checked:5.2f} s  peak "
          f"{peak >> 20:5} MB")
    del value


def main() -> None:
    _timed("call: its most values, as empty lists", _lists(protocol.CALL.values // 2 * 3), protocol.CALL, "call")
    _timed("call: its bytes, one string", b'{"ok":{"text":"' + b"x" * (protocol.CALL.bytes - 20) + b'"}}',
           protocol.CALL, "call")
    _timed("database: a diff of its most values", _rows(protocol.DATABASE.values - 100), protocol.DATABASE, "diff")
    _timed("unbounded: 64 MiB of empty lists (found)", _lists(64 << 20), None, None)


if __name__ == "__main__":
    main()
