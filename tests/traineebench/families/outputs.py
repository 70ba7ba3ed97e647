"""What the family tests share: a day's files compared across seeds, and the hostile shapes an output file can take
in an agent's workspace (each must leave a score, never an exception)."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from occubench.traineebench.families._common import MAX_OUTPUT_BYTES
from occubench.traineebench.family import Day, TaskSpec
from tests.traineebench.conftest import make_day


def snapshot(day: Day) -> dict[str, object]:
    """Every file the day holds by its path (a SQLite database by its rows), and the colleagues' rules."""
    files: dict[str, object] = {}
    for root in (day.workspace, day.cloud_disk):
        for path in sorted(root.rglob("*")):
            if path.suffix == ".db":
                with sqlite3.connect(path) as db:
                    files[str(path.relative_to(root.parent))] = db.execute("SELECT * FROM transactions").fetchall()
                db.close()
            elif path.is_file():
                files[str(path.relative_to(root.parent))] = path.read_bytes()
    files["rules"] = day.company.rules
    return files


def reread(task: TaskSpec) -> TaskSpec:
    """``task`` as it reads back from JSON (what it holds must score the same after)."""
    return dataclasses.replace(task, check=json.loads(json.dumps(task.check, allow_nan=False)))


def assert_seeded(tmp_path: Path, generate: Callable[[Day], TaskSpec]) -> None:
    """The same seed gives the same task and the same files; another seed, other files."""
    days = [make_day(tmp_path / name, seed) for name, seed in (("a", 5), ("b", 5), ("c", 6))]
    tasks = [generate(day) for day in days]
    assert tasks[0] == tasks[1] and snapshot(days[0]) == snapshot(days[1])
    assert snapshot(days[0]) != snapshot(days[2])


def _huge(path: Path) -> None:
    with path.open("wb") as handle:  # sparse: past the read limit without taking the disk
        handle.truncate(MAX_OUTPUT_BYTES + 1)


def _link(right: bytes) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        outside = path.parent.parent / f"outside-{path.name}"
        outside.write_bytes(right)
        path.symlink_to(outside)
    return write


def hostile(right: bytes) -> dict[str, Callable[[Path], None]]:
    """Ways to write an output file that is not the output: ``right`` is what the right output holds, put outside
    the workspace behind a link (which is not followed)."""
    return {
        "not JSON or CSV": lambda p: p.write_text('{"abnormal_suppliers": [', encoding="utf-8"),
        "not UTF-8": lambda p: p.write_bytes(b"\xff\xfe\x00\x81" * 64),
        "huge": _huge,
        "NaN": lambda p: p.write_text("NaN", encoding="utf-8"),
        "nested too deep": lambda p: p.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8"),
        "an integer too long": lambda p: p.write_text("9" * 5_000, encoding="utf-8"),
        "NUL bytes": lambda p: p.write_bytes(b"a,b\n\x00\x00\n"),
        "a link": _link(right),
        "a folder": lambda p: p.mkdir(),
        "a FIFO": lambda p: os.mkfifo(p),
    }
