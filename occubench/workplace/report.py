"""Workplace figures: task success rate, checkpoint score, steps and tool calls, by tasks per day and by easy/hard
tasks; with two-day runs, the day-two gain."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from occubench.results import Result
from occubench.tables import Table, percent


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def workplace_figures(results: Iterable[Result]) -> dict[str, Any]:
    """Per group of days (``tasks per day``) and per task difficulty: tasks, success rate, mean checkpoint score,
    and per day the mean steps and tool calls; plus, for two-day runs, day-one and day-two scores by difficulty."""
    by_size: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    by_level: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    learning: dict[tuple[int, str], list[float]] = defaultdict(list)
    for result in results:
        details = result.verdict_details
        if not result.ok or "task_scores" not in details:
            continue
        phase = 2 if str(result.task_id).endswith("-day2") else 1
        size = by_size[details["n_tasks"]]
        size["steps"].append(result.step_count)
        size["calls"].append(len(result.tool_calls))
        for task in details["task_scores"]:
            for group in (size, by_level[task["difficulty"]]):
                group["score"].append(task["score"])
                group["success"].append(float(task["success"]))
            learning[(phase, task["difficulty"])].append(task["score"])

    def summarise(g: dict[str, list[float]]) -> dict[str, Any]:
        return {"tasks": len(g["score"]), "success_rate": _mean(g["success"]), "checkpoint_score": _mean(g["score"]),
                "steps": _mean(g["steps"]), "tool_calls": _mean(g["calls"])}
    gain = {level: {"day1": _mean(learning[(1, level)]), "day2": _mean(learning[(2, level)])}
            for level in ("easy", "hard") if learning[(2, level)]}
    return {"by_tasks_per_day": {n: summarise(g) for n, g in sorted(by_size.items())},
            "by_difficulty": {level: summarise(g) for level, g in sorted(by_level.items())}, "learning": gain}


def workplace_tables(results: Iterable[Result]) -> list[Table]:
    figures = workplace_figures(results)
    if not figures["by_tasks_per_day"]:
        return []
    rows = [[f"{n} tasks per day", str(row["tasks"]), percent(row["success_rate"]), percent(row["checkpoint_score"]),
             f"{row['steps']:.1f}", f"{row['tool_calls']:.1f}"] for n, row in figures["by_tasks_per_day"].items()]
    rows += [[f"{level} tasks", str(row["tasks"]), percent(row["success_rate"]), percent(row["checkpoint_score"]),
              "", ""] for level, row in figures["by_difficulty"].items()]
    tables = [Table("Workplace: tasks by day size and by difficulty",
                    ["Group", "Tasks", "Success", "Checkpoint score", "Steps / day", "Tool calls / day"], rows)]
    if figures["learning"]:
        gain_rows = []
        for level, row in figures["learning"].items():
            delta = None if row["day1"] is None else row["day2"] - row["day1"]
            gain_rows.append([level, percent(row["day1"]), percent(row["day2"]),
                              "-" if delta is None else f"{100 * delta:+.1f} pts"])
        tables.append(Table("Day one → day two (mean checkpoint score)", ["Tasks", "Day 1", "Day 2", "Gain"],
                            gain_rows))
    return tables
