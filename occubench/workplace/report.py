"""Workplace figures: task success rate, checkpoint score, steps and tool calls, by tasks per day and by easy/hard
tasks; with two-day runs, the day-two gain."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from rich.table import Table

from occubench.store import Record, is_ok


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def workplace_figures(records: Iterable[Record]) -> dict[str, Any]:
    """Per group of days (``tasks per day``) and per task difficulty: tasks, success rate, mean checkpoint score,
    and per day the mean steps and tool calls; plus, for two-day runs, day-one and day-two scores by difficulty."""
    by_size: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    by_level: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    learning: dict[tuple[int, str], list[float]] = defaultdict(list)
    for record in records:
        if not is_ok(record) or "task_scores" not in record:
            continue
        phase = 2 if str(record["task_id"]).endswith("-day2") else 1
        size = by_size[record["n_tasks"]]
        size["steps"].append(record["step_count"])
        size["calls"].append(sum(len(step["tool_calls"]) for step in record.get("steps", [])))
        for task in record["task_scores"]:
            for group in (size, by_level[task["difficulty"]]):
                group["score"].append(task["score"])
                group["success"].append(float(task["success"]))
            learning[(phase, task["difficulty"])].append(task["score"])
    summarise = lambda g: {"tasks": len(g["score"]), "success_rate": _mean(g["success"]),  # noqa: E731
                           "checkpoint_score": _mean(g["score"]), "steps": _mean(g["steps"]),
                           "tool_calls": _mean(g["calls"])}
    gain = {level: {"day1": _mean(learning[(1, level)]), "day2": _mean(learning[(2, level)])}
            for level in ("easy", "hard") if learning[(2, level)]}
    return {"by_tasks_per_day": {n: summarise(g) for n, g in sorted(by_size.items())},
            "by_difficulty": {level: summarise(g) for level, g in sorted(by_level.items())}, "learning": gain}


def workplace_tables(records: Iterable[Record]) -> list[Table]:
    figures = workplace_figures(records)
    if not figures["by_tasks_per_day"]:
        return []
    table = Table(title="Workplace: tasks by day size and by difficulty")
    for column in ("Group", "Tasks", "Success", "Checkpoint score", "Steps / day", "Tool calls / day"):
        table.add_column(column, justify="left" if column == "Group" else "right")
    for n, row in figures["by_tasks_per_day"].items():
        table.add_row(f"{n} tasks per day", str(row["tasks"]), _pct(row["success_rate"]), _pct(row["checkpoint_score"]),
                      f"{row['steps']:.1f}", f"{row['tool_calls']:.1f}")
    table.add_section()
    for level, row in figures["by_difficulty"].items():
        table.add_row(f"{level} tasks", str(row["tasks"]), _pct(row["success_rate"]), _pct(row["checkpoint_score"]),
                      "", "")
    tables = [table]
    if figures["learning"]:
        gain = Table(title="Day one → day two (mean checkpoint score)")
        for column in ("Tasks", "Day 1", "Day 2", "Gain"):
            gain.add_column(column, justify="left" if column == "Tasks" else "right")
        for level, row in figures["learning"].items():
            delta = None if row["day1"] is None else row["day2"] - row["day1"]
            gain.add_row(level, _pct(row["day1"]), _pct(row["day2"]),
                         "-" if delta is None else f"{100 * delta:+.1f} pts")
        tables.append(gain)
    return tables
