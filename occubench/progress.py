"""Progress of a run as results arrive: a live bar on a terminal, one plain line per task elsewhere (CI, pipes)."""

from __future__ import annotations

import threading
from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from occubench.results import Result

_TALLY_EVERY = 10


class RunProgress:
    """Counts finished tasks, passes, errors and tokens; ``add`` may be called from any thread."""

    def __init__(self, total: int, console: Console, *, live: bool | None = None, label: str | None = None) -> None:
        self.total = total
        #: Prefixes each line: the run's name when several runs share the terminal.
        self.prefix = f"{escape(label)} " if label else ""
        self.console = console
        self.done = self.passed = self.errors = self.tokens = 0
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
        tokens = sum(u.tokens for u in result.usage.values())
        # One lock around counting and printing, so lines come out numbered in order.
        with self._lock:
            self.done += 1
            self.errors += not ok
            self.passed += passed
            self.tokens += tokens
            if self._progress:
                self._progress.update(self._task, completed=self.done, tally=self._tally())
                return
            kind = result.error.kind if result.error else "?"
            outcome = "[green]PASS[/green]" if passed else "FAIL" if ok else f"[red]ERROR[/red] {kind}"
            self.console.print(f"{self.prefix}[{self.done}/{self.total}] task {escape(str(result.task_id))}: {outcome} "
                               f"({result.step_count} steps, {result.duration_s:.1f} s)")
            if self.done % _TALLY_EVERY == 0 or self.done == self.total:
                self.console.print(f"{self.prefix}— {self.done}/{self.total} done, {self._tally()}")

    def _tally(self) -> str:
        evaluated = self.done - self.errors
        rate = f"{100 * self.passed / evaluated:.1f} %" if evaluated else "-"
        return f"pass rate {rate}, {self.errors} error(s), {self.tokens:,} tokens"
