"""The workplace's own commands: generate days to disk, and validate generated days."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from occubench.workplace.generate import generate_days, write_days
from occubench.workplace.validate import validate_day


def generate(args: argparse.Namespace) -> int:
    days = generate_days(args.seed, args.days)
    if args.learning:
        days += generate_days(args.seed, args.days, phase=2)
    paths = write_days(days, Path(args.out))
    print(f"{len(paths)} day(s) written to {args.out} (seed {args.seed})")
    return 0


def validate_days(days: int, seed: int, console: Console) -> bool:
    """Reference schedules meet every checkpoint; doing nothing meets none. False when any day does not."""
    results = [validate_day(day) for day in generate_days(seed, days) + generate_days(seed, days, phase=2)]
    table = Table(title=f"Workplace days from seed {seed}: reference must score 100 %, doing nothing 0 %")
    for column in ("Day", "Tasks", "Families", "Reference", "Do nothing", "Problems"):
        table.add_column(column)
    for result in results:
        reference = sum(s.score for s in result.reference) / len(result.reference)
        noop = sum(s.score for s in result.noop) / len(result.noop)
        table.add_row(result.day.id, str(len(result.day.tasks)),
                      ", ".join(sorted({t.family for t in result.day.tasks})), f"{100 * reference:.0f}%",
                      f"{100 * noop:.0f}%", "; ".join(result.errors))
    console.print(table)
    good = sum(result.ok for result in results)
    console.print(f"{good}/{len(results)} days valid ({days} days and their day-two variants)")
    return good == len(results)
