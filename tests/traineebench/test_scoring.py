"""Trainee-Bench's figures as its paper computes them, from a run's results (``occubench.workplace.report``, over
each day's ``task_scores``): CS the mean over days of each day's mean task score, so that a day of one task weighs
as much as a day of three; SR the share of tasks with every point earned; a day that ended in an error counts in
neither. Results written before the shared engine (``reference_scores`` rows of points) give the same figures."""

from __future__ import annotations

from dataclasses import asdict

from occubench.core.results import Result
from occubench.workplace.record import TaskScore
from occubench.workplace.report import workplace_figures, workplace_tables

#: Each day's tasks as (points, full points).
DAYS = {"scenario_a/day_1": [(3, 3)], "scenario_b/day_1": [(0, 3), (1, 2), (0, 4)]}


def scored(task_id: str, tasks: list[tuple[float, float]]) -> Result:
    rows = [asdict(TaskScore(f"t{n}", "Sales Analysis", "Trainee-Bench", "easy" if n == 1 else "hard", points / full,
                             points >= full, points, full)) for n, (points, full) in enumerate(tasks, start=1)]
    return Result(task_id=task_id, task_scenario_name=task_id.partition("/")[0], verdict_details={"task_scores": rows})


def written_before(task_id: str, tasks: list[tuple[float, float]]) -> Result:
    """A day as the Trainee-Bench suite wrote it before the shared engine: each task's family, points and notes."""
    rows = [{"family": "Sales Analysis", "points": points, "full": full, "notes": [] if points >= full else ["missed"]}
            for points, full in tasks]
    return Result(task_id=task_id, task_scenario_name=task_id.partition("/")[0],
                  verdict_details={"reference_scores": rows})


def test_completion_score_is_a_mean_of_day_means_and_success_a_share_of_tasks() -> None:
    failed = Result(task_id="scenario_c/day_1", status="error", verdict_details={"task_scores": [
        asdict(TaskScore("t1", "Sales Analysis", "Trainee-Bench", "easy", 1.0, True, 3, 3))]})
    figures = workplace_figures([*(scored(task_id, tasks) for task_id, tasks in DAYS.items()), failed])
    overall = figures["overall"]
    # Day means 1 and 1/6: CS 7/12, where pooling the four tasks would give (1 + 0.5) / 4.
    assert (overall["days"], overall["tasks"]) == (2, 4)
    assert abs(overall["checkpoint_score"] - 7 / 12) < 1e-12 and overall["success_rate"] == 0.25
    # By difficulty the tasks are pooled: the two first tasks, then the other two.
    assert figures["by_difficulty"]["easy"] == {"tasks": 2, "success_rate": 0.5, "checkpoint_score": 0.5}
    assert figures["by_difficulty"]["hard"] == {"tasks": 2, "success_rate": 0.0, "checkpoint_score": 0.25}
    assert {size: row["days"] for size, row in figures["by_tasks_per_day"].items()} == {1: 1, 3: 1}
    overall_table = workplace_tables([scored(task_id, tasks) for task_id, tasks in DAYS.items()])[0]
    assert overall_table.rows[0][:5] == ["-", "2", "4", "25.0%", "58.3%"]  # the one agent, unnamed here
    assert workplace_figures([failed])["overall"]["checkpoint_score"] is None and workplace_tables([failed]) == []


def test_results_written_before_the_shared_engine_give_the_same_figures() -> None:
    now = workplace_figures([scored(task_id, tasks) for task_id, tasks in DAYS.items()])
    before = workplace_figures([written_before(task_id, tasks) for task_id, tasks in DAYS.items()])
    assert before["overall"] == now["overall"] and before["by_tasks_per_day"] == now["by_tasks_per_day"]
