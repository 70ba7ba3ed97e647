"""Completion rate over a run directory's results: overall, per category, and the errors left to retry."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table

from occubench.store import Record, is_ok
from occubench.task import CATEGORY_ABBREVIATIONS


@dataclass
class Tally:
    passed: int = 0
    evaluated: int = 0

    @property
    def rate(self) -> float | None:
        return self.passed / self.evaluated if self.evaluated else None


@dataclass
class Summary:
    overall: Tally = field(default_factory=Tally)
    by_category: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    errors: list[Record] = field(default_factory=list)


def summarize(records: Iterable[Record]) -> Summary:
    """Completion rate = passed / evaluated; tasks with ``status: "error"`` are counted apart, not as failures."""
    summary = Summary()
    for record in records:
        if not is_ok(record):
            summary.errors.append(record)
            continue
        passed = record.get("is_correct") is True
        for tally in (summary.overall, summary.by_category[str(record.get("category", "?"))]):
            tally.evaluated += 1
            tally.passed += passed
    return summary


def _percent(tally: Tally) -> str:
    return "-" if tally.rate is None else f"{100 * tally.rate:.1f}%"


def print_summary(summary: Summary, console: Console, title: str) -> None:
    table = Table(title=title)
    table.add_column("Category")
    table.add_column("Passed", justify="right")
    table.add_column("Evaluated", justify="right")
    table.add_column("Completion", justify="right")
    for category in sorted(summary.by_category):
        tally = summary.by_category[category]
        name = f"{category} ({CATEGORY_ABBREVIATIONS[category]})" if category in CATEGORY_ABBREVIATIONS else category
        table.add_row(name, str(tally.passed), str(tally.evaluated), _percent(tally))
    table.add_section()
    table.add_row("All", str(summary.overall.passed), str(summary.overall.evaluated), _percent(summary.overall),
                  style="bold")
    console.print(table)
    if summary.errors:
        ids = ", ".join(str(r.get("task_id")) for r in summary.errors[:20])
        more = f" and {len(summary.errors) - 20} more" if len(summary.errors) > 20 else ""
        console.print(f"[yellow]{len(summary.errors)} task(s) ended in an error and are not scored: {ids}{more}. "
                      "Run the same command again to retry them.[/yellow]")
