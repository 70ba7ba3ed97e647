"""Progress of a run as results arrive: a live bar on a terminal, one plain line per task elsewhere (CI, pipes)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from occubench.core.results import Result
from occubench.util.text import markup

_TALLY_EVERY = 10


class RunProgress:
    """Counts finished tasks, and passes, errors and tokens as the run's final table does: over the run
    directory's results, those an earlier session left (``earlier``) included. ``add`` may be called from any
    thread."""

    def __init__(self, total: int, console: Console, *, live: bool | None = None, label: str | None = None,
                 earlier: Sequence[Result] = ()) -> None:
        self.total = total
        #: Prefixes each line: the run's name when several runs share the terminal.
        self.prefix = f"{markup(label, newlines=False)} " if label else ""
        self.console = console
        self.done = 0
        self.passed = sum(r.passed for r in earlier)
        self.errors = sum(not r.ok for r in earlier)
        self.evaluated = len(earlier) - self.errors
        self.tokens = sum(_tokens(r) for r in earlier)
        self._lock = threading.Lock()
        self._progress: Progress | None = None
        if console.is_terminal if live is None else live:
            self._progress = Progress(BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[tally]}"),
                                      TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                      console=console)
            self._task = self._progress.add_task("tasks", total=total, tally=self._tally())

    def __enter__(self) -> RunProgress:
        if self._progress:
            self._progress.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._progress:
            self._progress.stop()

    def add(self, result: Result) -> None:
        ok, passed = result.ok, result.passed
        # One lock around counting and printing, so lines come out numbered in order.
        with self._lock:
            self.done += 1
            self.errors += not ok
            self.evaluated += ok
            self.passed += passed
            self.tokens += _tokens(result)
            if self._progress:
                self._progress.update(self._task, completed=self.done, tally=self._tally())
                return
            kind = markup(result.error.kind, newlines=False) if result.error else "?"
            outcome = "[green]PASS[/green]" if passed else "FAIL" if ok else f"[red]ERROR[/red] {kind}"
            task = markup(result.task_id, newlines=False)
            self.console.print(f"{self.prefix}[{self.done}/{self.total}] task {task}: {outcome} "
                               f"({result.step_count} steps, {result.duration_s:.1f} s)")
            if self.done % _TALLY_EVERY == 0 or self.done == self.total:
                self.console.print(f"{self.prefix}— {self.done}/{self.total} done, {self._tally()}")

    def _tally(self) -> str:
        rate = f"{100 * self.passed / self.evaluated:.1f} %" if self.evaluated else "-"
        return f"pass rate {rate}, {self.errors} error(s), {self.tokens:,} tokens"


def _tokens(result: Result) -> int:
    return sum(u.tokens for u in [*result.usage.values(), *result.earlier_usage.values()])
