"""The run directory: ``args.json``, ``results.jsonl`` (one line per task, appended as tasks finish), ``debug.log``.

Lines are appended whole and flushed at once, so an interrupted run loses at most the line being written. On the
next start a half-written last line is dropped (the task simply runs again); a garbled line elsewhere stops the run
with its file and line number rather than discarding anything.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from occubench._redact import Redactor
from occubench.errors import ConfigError

RESULTS_FILE = "results.jsonl"
ARGS_FILE = "args.json"
DEBUG_LOG = "debug.log"

Record = dict[str, Any]


def read_results(path: Path, *, repair: bool = False) -> list[Record]:
    """Every record of a results file in order. A truncated last line is ignored (and cut off when ``repair``)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    records: list[Record] = []
    offset = 0
    for number, line in enumerate(data.splitlines(keepends=True), start=1):
        start, offset = offset, offset + len(line)
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            if offset == len(data) and not line.endswith(b"\n"):
                print(f"warning: {path}:{number}: ignoring a half-written last line (the run was interrupted); "
                      "its task will run again", file=sys.stderr)
                if repair:
                    with path.open("r+b") as handle:
                        handle.truncate(start)
                break
            raise ConfigError(f"{path}:{number}: not a valid result line ({exc}); fix or delete that line "
                              "and run again") from None
        records.append(record)
    else:
        if repair and data and not data.endswith(b"\n"):
            with path.open("ab") as handle:
                handle.write(b"\n")
    return records


def result_key(record: Record) -> tuple[Any, int]:
    """A result is one trial of one task; files without trials hold trial 0."""
    return record.get("task_id"), record.get("trial", 0)


def latest_by_task(records: Iterable[Record]) -> dict[tuple[Any, int], Record]:
    """The last record of each task and trial (one retried after an error appears again later in the file)."""
    return {result_key(record): record for record in records}


def is_ok(record: Record) -> bool:
    # Results written by the original OccuBench harness carry no status; they are finished results.
    return record.get("status", "ok") == "ok"


class ResultStore:
    def __init__(self, run_dir: Path, redactor: Redactor | None = None) -> None:
        self.run_dir = run_dir
        self.path = run_dir / RESULTS_FILE
        self.redactor = redactor or Redactor()
        self._lock = threading.Lock()
        run_dir.mkdir(parents=True, exist_ok=True)

    def load(self) -> list[Record]:
        return read_results(self.path, repair=True)

    def append(self, record: Record) -> None:
        line = (json.dumps(self.redactor.value(record), ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            # One write of the whole line on an O_APPEND descriptor: concurrent writers never interleave.
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)

    def drop(self, keys: set[tuple[Any, int]]) -> None:
        """Rewrite the file without the records of these (task id, trial) keys (errors about to be retried),
        atomically."""
        records = self.load()
        kept = [record for record in records if result_key(record) not in keys]
        if len(kept) == len(records):
            return
        tmp = self.path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8")
        os.replace(tmp, self.path)

    def write_args(self, args: dict[str, Any]) -> None:
        tmp = self.run_dir / (ARGS_FILE + ".tmp")
        tmp.write_text(json.dumps(self.redactor.value(args), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, self.run_dir / ARGS_FILE)
