"""The run directory: ``args.json``, ``results.jsonl`` (one line per task, appended as tasks finish), ``debug.log``,
and ``run.lock`` while a run works in it.

Lines are appended whole and flushed at once, so an interrupted run loses at most the line being written. On the
next start a half-written last line is dropped (the task simply runs again); a garbled line elsewhere stops the run
with its file and line number rather than discarding anything. Every line is strict JSON whatever the models and
tools returned (see :mod:`occubench._jsonsafe`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from occubench._jsonl import write_atomic
from occubench._jsonsafe import json_safe
from occubench._redact import Redactor
from occubench.errors import ConfigError
from occubench.results import Result

RESULTS_FILE = "results.jsonl"
ARGS_FILE = "args.json"
DEBUG_LOG = "debug.log"
#: What agents and judges were shown (instructions, system prompts, tool schemas, judge prompts), each distinct
#: value once: ``{"id": ..., "value": ...}`` per line, referenced by id from each result's ``context``.
CONTEXT_FILE = "context.jsonl"


def read_results(path: Path, *, repair: bool = False, quiet: bool = False) -> list[dict[str, Any]]:
    """Every line of a results file as the JSON object it holds, in order. A truncated last line is ignored (and
    cut off when ``repair``), with a warning unless ``quiet`` (a reader following a run that is writing)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    records: list[dict[str, Any]] = []
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
                if not quiet:
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


def load_results(path: Path, *, quiet: bool = False) -> list[Result]:
    """Every result of a results file of any version, in order."""
    return [Result.from_dict(record) for record in read_results(path, quiet=quiet)]


def latest_by_task(results: Iterable[Result]) -> dict[tuple[Any, int], Result]:
    """The last result of each task and trial (one retried after an error appears again later in the file)."""
    return {result.key: result for result in results}


def context_id(value: Any) -> str:
    """The id of a context value: its content's hash, so equal values are stored once."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def read_context(run_dir: Path) -> dict[str, Any]:
    """A run directory's context values by id; lines that do not read (a half-written last one) are skipped: they
    only lose what a viewer would show."""
    try:
        data = (run_dir / CONTEXT_FILE).read_bytes()
    except OSError:
        return {}
    values: dict[str, Any] = {}
    for line in data.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            values[record["id"]] = record.get("value")
    return values


def _line(record: dict[str, Any], redactor: Redactor) -> bytes:
    # Made JSON-safe first: redaction walks the value, and a 5,000-deep one would exhaust the stack.
    return (json.dumps(redactor.value(json_safe(record)), ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def _append(path: Path, line: bytes) -> None:
    # One write of the whole line on an O_APPEND descriptor: concurrent writers never interleave.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


class ResultStore:
    def __init__(self, run_dir: Path, redactor: Redactor | None = None) -> None:
        self.run_dir = run_dir
        self.path = run_dir / RESULTS_FILE
        self.redactor = redactor or Redactor()
        self._lock = threading.Lock()
        self._context_ids: set[str] | None = None  # read on the first result that brings context

    def load(self) -> list[Result]:
        return [Result.from_dict(record) for record in read_results(self.path, repair=self.path.exists())]

    def append(self, result: Result) -> None:
        """Write ``result``'s context values not yet in the directory, then the result itself (so no result
        refers to a value that is not on disk), filling ``result.context`` with their ids."""
        with self._lock:
            if result.context_values:
                self._add_context(result)
            _append(self.path, _line(result.to_dict(), self.redactor))

    def _add_context(self, result: Result) -> None:
        path = self.run_dir / CONTEXT_FILE
        if self._context_ids is None:
            self._context_ids = set(read_context(self.run_dir))
            if path.exists() and not path.read_bytes().endswith(b"\n"):
                _append(path, b"\n")  # after a half-written last line, so the next one starts on its own
        for kind, value in result.context_values.items():
            safe = self.redactor.value(json_safe(value))
            result.context[kind] = key = context_id(safe)
            if key not in self._context_ids:
                _append(path, _line({"id": key, "value": safe}, self.redactor))
                self._context_ids.add(key)
        result.context_values = {}

    def drop(self, keys: set[tuple[Any, int]]) -> None:
        """Rewrite the file without the records of these (task id, trial) keys (errors about to be retried),
        atomically; every other line is kept as it was."""
        records = read_results(self.path, repair=True)
        kept = [record for record in records if Result.from_dict(record).key not in keys]
        if len(kept) == len(records):
            return
        write_atomic(self.path, b"".join(_line(record, self.redactor) for record in kept))

    def write_args(self, args: dict[str, Any]) -> None:
        write_atomic(self.run_dir / ARGS_FILE,
                     json.dumps(self.redactor.value(json_safe(args)), indent=2, ensure_ascii=False) + "\n")

    def previous_args(self) -> dict[str, Any]:
        """The ``args.json`` an earlier run left here, or nothing."""
        try:
            previous = json.loads((self.run_dir / ARGS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return previous if isinstance(previous, dict) else {}
