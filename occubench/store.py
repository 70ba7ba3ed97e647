"""The run directory: ``args.json``, ``results.jsonl`` (one line per task, appended as tasks finish), ``debug.log``,
and ``run.lock`` while a run works in it.

Lines are appended whole and flushed at once, so an interrupted run loses at most the line being written. On the
next start a half-written last line is dropped (the task simply runs again); a garbled line elsewhere stops the run
with its file and line number rather than discarding anything. Every line is strict JSON whatever the models and
tools returned (see :mod:`occubench.util.jsonsafe`).

``args.json`` says what belongs in the directory: the configuration hashes its results may carry and the ids of its
task set. A line that is not the run's (appended from another run, for a task outside its task set, or longer or
deeper than any run writes: :data:`~occubench.util.jsonl.MAX_LINE_BYTES`, :data:`~occubench.util.jsonl.MAX_LINE_DEPTH`)
is left out whenever the directory is read — by a resume, a report, a rescore, the viewer — with one warning naming
the file and line; nothing on disk is rewritten for it. Every file here is read and written without following a
symbolic link planted in its place (:mod:`occubench.util.runfiles`).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from occubench.core.results import Result
from occubench.core.task import Task
from occubench.errors import ConfigError
from occubench.llm.types import Usage
from occubench.util.jsonl import OutsizedLine, dumps_line, json_digest, loads_line, write_atomic
from occubench.util.jsonsafe import json_safe
from occubench.util.redact import Redactor
from occubench.util.runfiles import open_file, read_file
from occubench.util.text import terminal

RESULTS_FILE = "results.jsonl"
ARGS_FILE = "args.json"
DEBUG_LOG = "debug.log"
#: What agents and judges were shown (instructions, system prompts, tool schemas, judge prompts), each distinct
#: value once: ``{"id": ..., "value": ...}`` per line, referenced by id from each result's ``context``.
CONTEXT_FILE = "context.jsonl"


class _Line(NamedTuple):
    """A non-blank line of a results file."""

    number: int
    raw: bytes
    #: The JSON object it holds; None for a line left out unread, ``refused`` saying why.
    record: dict[str, Any] | None
    refused: str = ""


def read_results(path: Path, *, repair: bool = False, quiet: bool = False) -> list[dict[str, Any]]:
    """Every line of a results file as the JSON object it holds, in order. A truncated last line is ignored (and
    cut off when ``repair``), as are lines too long or too deep to read, with a warning unless ``quiet`` (a reader
    following a run that is writing)."""
    lines = _numbered(path, repair, quiet)
    refused = [(line.number, line.refused) for line in lines if line.record is None]
    if refused and not quiet:
        print(f"warning: {terminal(_left_out(path, refused))}", file=sys.stderr)
    return [line.record for line in lines if line.record is not None]


def _numbered(path: Path, repair: bool, quiet: bool) -> list[_Line]:
    """The non-blank lines of a results file (see :func:`read_results`), read without following a link to it."""
    data = read_file(path)
    if data is None:
        return []
    lines: list[_Line] = []
    offset = 0
    for number, raw in enumerate(data.splitlines(keepends=True), start=1):
        start, offset = offset, offset + len(raw)
        if not raw.strip():
            continue
        try:
            record = loads_line(raw)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
        except OutsizedLine as exc:  # read by nobody, kept on disk: what a foreign line is
            lines.append(_Line(number, raw, None, f"it is {exc}, which no run writes"))
            continue
        except ValueError as exc:
            if offset == len(data) and not raw.endswith(b"\n"):
                if not quiet:
                    print(f"warning: {terminal(str(path))}:{number}: ignoring a half-written last line (the run was "
                          "interrupted); its task will run again", file=sys.stderr)
                if repair:
                    _truncate(path, start)
                break
            raise ConfigError(f"{path}:{number}: not a valid result line ({exc}); fix or delete that line "
                              "and run again") from None
        lines.append(_Line(number, raw, record))
    else:
        if repair and data and not data.endswith(b"\n"):
            _append(path, b"\n")
    return lines


def load_results(path: Path, *, quiet: bool = False) -> list[Result]:
    """Every result of a results file of any version, in order."""
    return [Result.from_dict(record) for record in read_results(path, quiet=quiet)]


@dataclass
class RunRecords:
    """The results of a run directory that are the run's own, and the lines left out as foreign."""

    results: list[Result]
    #: Line numbers of lines that are not this run's (another configuration's, a task outside its task set, or
    #: one too long or too deep to read).
    left_out: list[int] = field(default_factory=list)
    #: The one warning about them, naming the file and the first line; None when nothing was left out.
    warning: str | None = None


def read_args(run_dir: Path) -> dict[str, Any]:
    """A run directory's ``args.json``, or nothing (none yet, or not a JSON object); a symbolic link is refused."""
    try:
        args = loads_line(read_file(run_dir / ARGS_FILE) or b"{}")
    except ValueError:
        return {}
    return args if isinstance(args, dict) else {}


def _members(value: Any) -> set[Any] | None:
    # Only strings and numbers are ids or hashes: anything else in a hand-edited args.json matches nothing.
    return {item for item in value if isinstance(item, (str, int))} if isinstance(value, list) else None


def run_records(run_dir: Path, *, repair: bool = False, quiet: bool = False) -> RunRecords:
    """The results of ``run_dir`` whose configuration hash and task are the run's (as its ``args.json`` says; a
    directory without one is taken whole). See :func:`read_results` for ``repair`` and ``quiet``."""
    path = run_dir / RESULTS_FILE
    own, left_out = _own(_numbered(path, repair, quiet), read_args(run_dir))
    return RunRecords([result for _, result in own], [number for number, _ in left_out],
                      _left_out(path, left_out) if left_out else None)


def _left_out(path: Path, lines: list[tuple[int, str]]) -> str:
    """The one warning about the lines left out, by number, each with why."""
    numbers = ", ".join(str(number) for number, _ in lines[:10]) + (", …" if len(lines) > 10 else "")
    return (f"{path}:{lines[0][0]}: {len(lines)} line(s) left out as not this run's (line {numbers}; first: "
            f"{lines[0][1]}); the file is left as it is")


def _own(lines: list[_Line], args: dict[str, Any]) -> tuple[list[tuple[int, Result]], list[tuple[int, str]]]:
    """The run's own results by line number, and the numbers of the lines that are not (another configuration's,
    a task outside the task set ``args`` names, or unread), each with why."""
    hashes = _members(args.get("config_hashes")) or _members([args.get("config_hash")]) or None
    ids = _members(args.get("task_ids"))
    own: list[tuple[int, Result]] = []
    left_out: list[tuple[int, str]] = []
    for line in lines:
        if line.record is None:
            left_out.append((line.number, line.refused))
            continue
        result = Result.from_dict(line.record)
        task = result.task_id if isinstance(result.task_id, (str, int)) else None
        if hashes is not None and result.config_hash not in hashes:
            left_out.append((line.number, f"config_hash {result.config_hash!r} is another run's (this run's is "
                                          f"{args.get('config_hash')!r})"))
        elif ids is not None and (task is None or task not in ids):
            left_out.append((line.number, f"task {result.task_id!r} is not in this run's task set"))
        else:
            own.append((line.number, result))
    return own, left_out


def latest_by_task(results: Iterable[Result]) -> dict[tuple[Any, int], Result]:
    """The last result of each task and trial (one retried after an error appears again later in the file)."""
    return {result.key: result for result in results}


def read_context(run_dir: Path) -> dict[str, Any]:
    """A run directory's context values by id; lines that do not read (a half-written last one, one too long or
    too deep) are skipped: they only lose what a viewer would show. A symbolic link is refused."""
    return _context(read_file(run_dir / CONTEXT_FILE) or b"")


def _context(data: bytes) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for line in data.splitlines():
        try:
            record = loads_line(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            values[record["id"]] = record.get("value")
    return values


def _line(record: dict[str, Any], redactor: Redactor) -> bytes:
    # Made JSON-safe first: redaction walks the value, and a 5,000-deep one would exhaust the stack.
    return dumps_line(redactor.value(json_safe(record)))


def _append(path: Path, line: bytes) -> None:
    # One write of the whole line on an O_APPEND descriptor: concurrent writers never interleave.
    fd = open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _truncate(path: Path, size: int) -> None:
    fd = open_file(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
    finally:
        os.close(fd)


class ResultStore:
    def __init__(self, run_dir: Path, redactor: Redactor | None = None) -> None:
        self.run_dir = run_dir
        self.path = run_dir / RESULTS_FILE
        self.redactor = redactor or Redactor()
        self._lock = threading.Lock()
        self._context_ids: set[str] | None = None  # read on the first result that brings context
        self._warned: set[str] = set()
        self._earlier: dict[tuple[Any, int], dict[str, Usage]] = {}  # see supersede()

    def load(self) -> list[Result]:
        """The run's own results (see :func:`run_records`); the warning about lines left out is printed once. A
        symbolic link (or a FIFO, a folder) in place of any file the run writes stops it here, before it starts;
        each is opened without following one, should it be planted later. The file is compacted first: a pair
        retried after an error keeps only its new record (see :meth:`supersede`)."""
        for name in (RESULTS_FILE, CONTEXT_FILE, ARGS_FILE, DEBUG_LOG):
            with suppress(FileNotFoundError):
                os.close(open_file(self.run_dir / name, os.O_RDONLY))
        args = self.previous_args()
        with self._lock:
            lines = _numbered(self.path, self.path.exists(), False)
            own, left_out = _own(lines, args)
            if self._compact(lines, own):
                own, left_out = _own(_numbered(self.path, False, True), args)
        warning = _left_out(self.path, left_out) if left_out else None
        if warning and warning not in self._warned:
            self._warned.add(warning)
            print(f"warning: {warning}", file=sys.stderr)
        return [result for _, result in own]

    def append(self, result: Result) -> None:
        """Write ``result``'s context values not yet in the directory, then the result itself (so no result
        refers to a value that is not on disk), filling ``result.context`` with their ids."""
        with self._lock:
            if result.context_values:
                self._add_context(result)
            for role, usage in self._earlier.pop(result.key, {}).items():
                result.earlier_usage.setdefault(role, Usage()).add(usage)
            _append(self.path, _line(result.to_dict(), self.redactor))

    def supersede(self, records: Iterable[Result]) -> None:
        """These error records are about to be retried: each pair's new result carries what its records spent
        (``earlier_usage``) and, once the run's results are next loaded, replaces them in the file. Appended, not
        rewritten at once: a resume that retries thousands of errors rewrites the file once, not once per error;
        and a run killed meanwhile loses no record of what was paid for (the newer line of a pair is the one read)."""
        for old in records:
            spent = self._earlier.setdefault(old.key, {})
            for role, usage in [*old.usage.items(), *old.earlier_usage.items()]:
                spent.setdefault(role, Usage()).add(usage)

    def _compact(self, lines: list[_Line], own: list[tuple[int, Result]]) -> bool:
        """Rewrite the file of ``lines``, atomically, without the run's records (``own``) that a later one of the
        same pair replaced; every other line, a foreign one included, is kept as it was. Whether any was dropped."""
        last = {result.key: number for number, result in own}
        dropped = {number for number, result in own if last[result.key] != number}
        if dropped:
            write_atomic(self.path, b"".join(line.raw if line.raw.endswith(b"\n") else line.raw + b"\n"
                                             for line in lines if line.number not in dropped))
        return bool(dropped)

    def _add_context(self, result: Result) -> None:
        path = self.run_dir / CONTEXT_FILE
        if self._context_ids is None:
            data = read_file(path) or b""
            self._context_ids = set(_context(data))
            if data and not data.endswith(b"\n"):
                _append(path, b"\n")  # after a half-written last line, so the next one starts on its own
        for kind, value in result.context_values.items():
            safe = self.redactor.value(json_safe(value))
            result.context[kind] = key = json_digest(safe)  # equal values are stored once
            if key not in self._context_ids:
                _append(path, _line({"id": key, "value": safe}, self.redactor))
                self._context_ids.add(key)
        result.context_values = {}

    def write_args(self, args: dict[str, Any]) -> None:
        write_atomic(self.run_dir / ARGS_FILE,
                     json.dumps(self.redactor.value(json_safe(args)), indent=2, ensure_ascii=False) + "\n")

    def previous_args(self) -> dict[str, Any]:
        """The ``args.json`` an earlier run left here, or nothing."""
        return read_args(self.run_dir)


def pending(tasks: Iterable[Task], latest: dict[tuple[Any, int], Result], trials: int) -> list[tuple[Task, int]]:
    """The (task, trial) pairs of ``tasks`` without an ``ok`` result in ``latest``."""
    return [(task, trial) for task in tasks for trial in range(trials)
            if not ((key := (task.task_id, trial)) in latest and latest[key].ok)]


def pending_tasks(tasks: Iterable[Task], store: ResultStore,
                  trials: int = 1) -> tuple[list[tuple[Task, int]], list[Result]]:
    """The (task, trial) pairs without an ``ok`` result, and the latest results of the others in the run
    directory (kept as they are). Each pending pair's old error record is replaced by its new result
    (:meth:`ResultStore.supersede`), so each pair appears once in the file."""
    latest = latest_by_task(store.load())
    todo = pending(tasks, latest, trials)
    running = {(task.task_id, trial) for task, trial in todo}
    store.supersede(latest[key] for key in running & latest.keys())
    return todo, [result for key, result in latest.items() if key not in running]
