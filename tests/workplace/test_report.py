"""The workplace's tables in the shape of Trainee-Bench's: per run (overall, tasks per day, easy and hard, category,
the day-one → day-two change of each arm) and over runs (scores per guidance tier), from real offline runs and from
hand-made results of learning runs and of older files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from occubench import cli
from occubench.cli import run as evaluate
from occubench.core.results import Result
from occubench.core.tables import percent
from occubench.report.robustness import load_run_results
from occubench.workplace import workplace_figures
from occubench.workplace.report import workplace_overview_tables, workplace_tables


def _run(root: Path, name: str, *args: str) -> list[Result]:
    assert evaluate.main(["--suite", "workplace", "--output-dir", str(root), "--run-name", name, *args]) == 0
    return load_run_results(root / name)


def _tasks(results: list[Result]) -> list[dict[str, Any]]:
    return [task for r in results for task in r.verdict_details["task_scores"]]


def test_reference_passes_every_task_and_noop_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reference = _run(tmp_path, "ref", "--agent", "reference", "--days", "8", "--seed", "4")
    tasks = _tasks(reference)
    figures = workplace_figures(reference)
    overall = figures["overall"]
    assert (overall["days"], overall["tasks"], overall["success_rate"], overall["checkpoint_score"]) == (
        8, len(tasks), 1.0, 1.0)
    steps, calls = sum(r.step_count for r in reference) / 8, sum(len(r.tool_calls) for r in reference) / 8
    assert (overall["steps"], overall["tool_calls"]) == (steps, calls) and calls > 1
    sizes = Counter(r.verdict_details["n_tasks"] for r in reference)
    assert {n: row["days"] for n, row in figures["by_tasks_per_day"].items()} == sizes
    categories = Counter(task["category"] for task in tasks)
    assert {c: row["tasks"] for c, row in figures["by_category"].items()} == categories and len(categories) > 1
    assert list(figures["by_category"]) == sorted(categories)
    assert {level: row["tasks"] for level, row in figures["by_difficulty"].items()} == Counter(
        task["difficulty"] for task in tasks)
    assert (figures["day_two"], figures["guidance"], figures["learning"]) == (False, 0, {})
    json.dumps(figures)  # JSON-able

    noop = _run(tmp_path, "noop", "--agent", "noop", "--days", "8", "--seed", "4")
    assert len(_tasks(noop)) == len(tasks)  # the same days
    for row in [workplace_figures(noop)["overall"], *workplace_figures(noop)["by_category"].values()]:
        assert row["success_rate"] == row["checkpoint_score"] == 0

    capsys.readouterr()
    assert cli.main(["report", str(tmp_path / "ref")]) == 0
    out = capsys.readouterr().out
    overall_table = out.split("### Workplace: overall and by tasks per day", 1)[1].split("###", 1)[0]
    assert f"| Overall | 8 | {len(tasks)} | 100.0% | 100.0% | {steps:.1f} | {calls:.1f} |" in overall_table
    for n, days in sizes.items():
        assert f"| {n} tasks per day | {days} |" in overall_table
    category_table = out.split("### Workplace: by category", 1)[1].split("###", 1)[0]
    assert [line.split(" | ")[0].lstrip("| ") for line in category_table.splitlines()[4:] if line] == sorted(categories)
    for category, n in categories.items():
        assert f"| {category} | {n} | 100.0% | 100.0% |" in category_table
    assert "### Workplace: easy and hard tasks" in out
    assert "Day one → day two" not in out and "Workplace scores per guidance tier" not in out  # one run, tier 0


def test_a_guidance_matrix_shows_the_scores_per_tier(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--suite", "workplace", "--days", "3", "--seed", "4", "--output-dir", str(tmp_path)]
    assert evaluate.main([*common, "--agent", "reference", "--guidance", "0", "2"]) == 0
    captured = capsys.readouterr()
    table = captured.out.split("Workplace scores per guidance tier", 1)[1]
    cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in table.splitlines() if "│" in line]
    assert [row[:2] for row in cells] == [["reference", "0"], ["reference", "2"]]
    # The tiers are separate settings: no run is taken for a repeat of the other.
    assert "several results for one (task, trial)" not in captured.err and "evaluated the same" not in captured.err

    assert evaluate.main([*common, "--agent", "noop", "--guidance", "2"]) == 0
    assert "Workplace (guidance tier 2): overall and by tasks per day" in capsys.readouterr().out

    runs = sorted(tmp_path.iterdir())
    assert [run.name.rsplit("__", 1)[0] for run in runs] == [
        "noop__workplace__E0__guidance2", "reference__workplace__E0", "reference__workplace__E0__guidance2"]
    assert cli.main(["report", *map(str, runs)]) == 0
    out = capsys.readouterr().out
    assert out.index("## Completion by fault level") < out.index("## Workplace scores per guidance tier") \
        < out.index("## Run ")
    tier_table = out.split("## Workplace scores per guidance tier", 1)[1].split("##", 1)[0]
    assert ("| Agent | Guidance tier | Days | Tasks | Success rate | Checkpoint score | Easy CS | Hard CS |"
            in tier_table)
    expected = []
    for run, agent, tier in zip(runs, ["noop", "reference", "reference"], [2, 0, 2]):
        tasks = _tasks(load_run_results(run))
        rate = percent(sum(t["success"] for t in tasks) / len(tasks))
        score = percent(sum(t["score"] for t in tasks) / len(tasks))
        levels = [[t["score"] for t in tasks if t["difficulty"] == level] for level in ("easy", "hard")]
        expected.append(f"| {agent} | {tier} | 3 | {len(tasks)} | {rate} | {score} | "
                        + " | ".join(percent(sum(s) / len(s)) if s else "-" for s in levels) + " |")
    assert [line for line in tier_table.splitlines() if line.startswith(("| noop", "| reference"))] == expected
    assert "0.0%" in expected[0] and "100.0%" in expected[1]
    # Each run's own tables say which tier they are of.
    assert "### Workplace: overall and by tasks per day" in out
    assert out.count("### Workplace (guidance tier 2): overall and by tasks per day") == 2
    assert "| workplace | reference | - | 0 | 100.0% |" in out and "| workplace | reference | - | 2 | 100.0% |" in out


def _day(task_id: str, scores: list[tuple[str, float]], *, ok: bool = True, env_mode: str = "E0",
         **details: Any) -> Result:
    """A hand-made workplace day: (difficulty, score) per task, in family order; ``details`` go into its
    ``verdict_details``."""
    tasks = [{"task_id": f"t{i}", "family": f"family{i}", "category": "Technology & IT", "difficulty": level,
              "score": score, "success": score == 1, "checkpoints": []} for i, (level, score) in enumerate(scores)]
    return Result.from_dict({
        "task_id": task_id, "suite": "workplace", "agent_model": "A", "env_mode": env_mode,
        "status": "ok" if ok else "error",
        "is_correct": all(t["success"] for t in tasks) if ok else None, "step_count": 4,
        "verdict_details": {"day_score": 0, "n_tasks": len(tasks), "task_scores": tasks, **details} if ok else {}})


def _arm(day_one: str, arm: str, scores: list[tuple[str, float]], ok: bool = True) -> Result:
    return _day(f"{day_one}-day2-{arm}", scores, ok=ok, phase=2, arm=arm, day_one=day_one)


DAY_ONE = {"d1": [("easy", 1.0), ("hard", 0.2)], "d2": [("easy", 0.5), ("hard", 0.0)], "d4": [("easy", 0.8)]}


def _learning_run() -> list[Result]:
    return [
        *(_day(day, scores) for day, scores in DAY_ONE.items()),
        _day("d3", [], ok=False),  # an error: its day twos pair with nothing
        _arm("d1", "none", [("easy", 0.5), ("hard", 0.4)]), _arm("d2", "none", [("easy", 1.0), ("hard", 0.0)]),
        _arm("d3", "none", [("easy", 1.0), ("hard", 1.0)]),
        _arm("d1", "notes", [("easy", 1.0), ("hard", 0.6)]), _arm("d2", "notes", [], ok=False),
        _arm("d4", "reflection", [("easy", 0.4)]),  # no hard task: no hard row
        _arm("d1", "zeta", [("easy", 1.0), ("hard", 1.0)]),  # an arm this version does not know: by its name, last
        # An older file's day two: no phase, no arm; the mentor's feedback.
        _day("d2-day2", [("easy", 0.0), ("hard", 0.5)]),
    ]


def _expected(label: str, pairs: dict[str, list[tuple[str, float]]], gains: dict[str, str]) -> list[list[str]]:
    """The rows of one arm, from its day twos (by day one) and the day ones, in overall, easy, hard order."""
    rows = []
    for group, gain in gains.items():
        first = [s for day in pairs for level, s in DAY_ONE[day] if group in ("overall", level)]
        second = [s for scores in pairs.values() for level, s in scores if group in ("overall", level)]
        rows.append([label, f"{group} ({len(first)})", percent(sum(first) / len(first)),
                     percent(sum(second) / len(second)), gain])
    return rows


def test_day_two_arms_against_their_day_one() -> None:
    tables = workplace_tables(_learning_run())
    assert [t.title for t in tables] == [
        "Workplace (day one): overall and by tasks per day", "Workplace (day one): easy and hard tasks",
        "Workplace (day one): by category", "Workplace learning: Day one → day two by arm (mean checkpoint score)"]
    overall = tables[0].rows[0]
    assert overall[:4] == ["Overall", "3", "5", percent(1 / 5)]  # the day ones only; d1's easy task succeeded
    assert tables[3].columns == ["Arm", "Tasks", "Day 1", "Day 2", "Gain"]
    assert tables[3].rows == [
        # none: d1 and d2 (d3's day one is an error). Overall 0.425 → 0.475, easy 0.75 → 0.75, hard 0.1 → 0.2.
        *_expected("no experience", {"d1": [("easy", 0.5), ("hard", 0.4)], "d2": [("easy", 1.0), ("hard", 0.0)]},
                   {"overall": "+5.0 pts", "easy": "+0.0 pts", "hard": "+10.0 pts"}),
        # notes: d1 only (its d2 is an error). 0.6 → 0.8, 1 → 1, 0.2 → 0.6.
        *_expected("own notes", {"d1": [("easy", 1.0), ("hard", 0.6)]},
                   {"overall": "+20.0 pts", "easy": "+0.0 pts", "hard": "+40.0 pts"}),
        *_expected("reflected notes", {"d4": [("easy", 0.4)]}, {"overall": "-40.0 pts", "easy": "-40.0 pts"}),
        *_expected("mentor's feedback", {"d2": [("easy", 0.0), ("hard", 0.5)]},
                   {"overall": "+0.0 pts", "easy": "-50.0 pts", "hard": "+50.0 pts"}),
        *_expected("zeta", {"d1": [("easy", 1.0), ("hard", 1.0)]},
                   {"overall": "+40.0 pts", "easy": "+0.0 pts", "hard": "+80.0 pts"}),
    ]


def test_a_rounding_residue_is_no_loss() -> None:
    # 0.1 + 0.2 = 0.30000000000000004 on day one, 0.3 on day two: no change, shown as +0.0, never -0.0.
    results = [_day("d1", [("easy", 0.1), ("easy", 0.2)]), _arm("d1", "none", [("easy", 0.3), ("easy", 0.0)])]
    assert [row[-1] for row in workplace_tables(results)[-1].rows] == ["+0.0 pts", "+0.0 pts"]


def test_titles_name_the_tier_and_errors_are_never_scored() -> None:
    tiered = [_day("d1", [("hard", 0.5)], ok=True), _day("d2", [], ok=False)]
    for result in tiered:
        result.env_info["guidance"] = 3
    tables = workplace_tables(tiered)
    assert tables[0].title == "Workplace (guidance tier 3): overall and by tasks per day"
    assert tables[0].rows[0][:5] == ["Overall", "1", "1", "0.0%", "50.0%"]
    assert workplace_tables([_day("d2", [], ok=False)]) == []


def test_the_tier_table_takes_day_ones_and_keeps_modes_apart() -> None:
    untiered = [_day("d1", [("easy", 1.0)]), _arm("d1", "none", [("easy", 0.0)])]
    assert workplace_overview_tables(untiered) == []  # every result is of tier 0: nothing to compare
    hinted = [_day("d1", [("easy", 0.5), ("hard", 0.0)]), _day("d1", [("easy", 1.0), ("hard", 1.0)], env_mode="E1")]
    for result in hinted:
        result.env_info["guidance"] = 1
    (table,) = workplace_overview_tables(untiered + hinted)
    assert table.columns[:3] == ["Agent", "Fault level", "Guidance tier"]
    # The day two of the untiered run is left out: tier 0 has one day of one task.
    assert table.rows == [["A", "E0", "0", "1", "1", "100.0%", "100.0%", "100.0%", "-"],
                          ["A", "E0", "1", "1", "2", "0.0%", "25.0%", "50.0%", "0.0%"],
                          ["A", "E1", "1", "1", "2", "100.0%", "100.0%", "100.0%", "100.0%"]]


def test_a_learning_run_reports_each_arm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _run(tmp_path, "r", "--agent", "reference", "--days", "3", "--seed", "9", "--learning")
    firsts = [r for r in results if "phase" not in r.verdict_details]
    out = capsys.readouterr().out
    assert "Workplace (day one): overall and by tasks per day" in out
    (table,) = [t for t in workplace_tables(results) if "Day one → day two" in t.title]
    # The reference is perfect on both days; a scripted agent has no reflection arm.
    tasks = Counter(t["difficulty"] for t in _tasks(firsts))
    assert table.rows == [[label, f"{group} ({n})", "100.0%", "100.0%", "+0.0 pts"]
                          for label in ("no experience", "own notes")
                          for group, n in [("overall", sum(tasks.values())), *sorted(tasks.items())]]
    assert workplace_figures(results)["overall"]["days"] == len(firsts) == 3


def test_the_checkpoint_score_is_the_mean_over_days_of_each_day_s_mean() -> None:
    # Trainee-Bench averages per scenario: a day of one task done and a day of three tasks missed score 50 %, where
    # pooling the four tasks would say 25 %. The success rate stays a share of tasks.
    overall = workplace_figures([_day("d1", [("easy", 1.0)]), _day("d2", [("easy", 0.0)] * 3)])["overall"]
    assert (overall["checkpoint_score"], overall["success_rate"], overall["tasks"]) == (0.5, 0.25, 4)
