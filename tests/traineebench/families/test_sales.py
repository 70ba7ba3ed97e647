"""Sales Analysis: each of the reference's nine task types (with parameters its configs use) generated, answered
from the CSVs by the handbook's rules, and scored in its points (the handbook and the file 30% of the full points,
the later checkpoints sharing the rest: of 4, 1.2 and 0.9333 each; of 3, 0.9 and 1.05 each)."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from occubench.errors import ConfigError
from occubench.traineebench.families.sales import FAMILY, MANUAL
from occubench.traineebench.family import Day, Outcome, TaskSpec
from tests.traineebench.families.outputs import assert_seeded, hostile, reread

CASES = {"top_sales_employee": {"department": "Sales_3"},
         "sales_statistics": {"department": "Sales_2"},
         "cross_depts_extreme_employee": {"departments": ["Sales_2", "Sales_3"], "mode": "bottom"},
         "per_dept_extreme_employee": {"departments": ["Sales_2", "Sales_1"], "mode": "top"},
         "per_dept_avg_sales": {"departments": ["Sales_1", "Sales_2"], "quarter": 2},
         "per_dept_top_n": {"departments": ["Sales_1", "Sales_3"], "n": 2},
         "cross_depts_top_n": {"departments": ["Sales_1", "Sales_3", "Sales_2"], "n": 3},
         "dept_person_qoq_count": {"department": "Sales_3", "direction": "down", "quarter": 2},
         "all_depts_qoq_count": {"direction": "up", "quarter": 4}}
FOUR = {"top_sales_employee", "cross_depts_extreme_employee"}  # the types that also check the departments


def points(kind: str, basics: bool, later: int) -> float:
    """The reference's weighted points: 30% of the full for the first checkpoint, the rest shared by the others."""
    full = 4 if kind in FOUR else 3
    return round(0.3 * full * basics + 0.7 * full / (full - 1) * later, 6)


def generated(day: Day, kind: str, **params: Any) -> TaskSpec:
    folder = day.reference / "schemas/tasks/sales/templates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANUAL).write_text("Stand-in sales handbook: sum `amount` by `employee_id`.\n")
    return FAMILY.generate(day, task_type=kind, task_params=params or CASES[kind])


def quarter_totals(day: Day, quarter: int) -> dict[str, dict[str, Any]]:
    """Each salesperson's total of the quarter, read from the CSVs on the cloud disk (the handbook's method)."""
    people: dict[str, dict[str, Any]] = {}
    for path in sorted((day.cloud_disk / "sales").glob(f"sales_*_Q{quarter}_*.csv")):
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                person = people.setdefault(row["employee_id"], {"employee_id": row["employee_id"], "name": row["name"],
                                                                "department": row["department"], "total_sales": 0.0})
                person["total_sales"] += float(row["amount"])
    return people


def _rounded(people: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**p, "total_sales": round(p["total_sales"], 2)} for p in people]


def _ranked(people: list[dict[str, Any]], reverse: bool = True) -> list[dict[str, Any]]:
    return sorted(people, key=lambda p: p["total_sales"], reverse=reverse)


def answer(day: Day, kind: str, task: TaskSpec) -> Any:
    """The right answer, worked out from the CSVs as an analyst following the handbook would."""
    found = re.search(r"last year's Q(\d)", task.description)
    assert found
    p = {**CASES[kind], "quarter": int(found[1])}
    people = quarter_totals(day, p["quarter"])

    def of(teams: list[str]) -> list[dict[str, Any]]:
        return [x for x in people.values() if x["department"] in teams]

    teams = p.get("departments", [p.get("department")])
    top = p.get("mode", "top") == "top"
    if kind in ("top_sales_employee", "cross_depts_extreme_employee"):
        return _rounded(_ranked(of(teams), top)[:1])
    if kind == "per_dept_extreme_employee":
        return {t: _rounded(_ranked(of([t]), top)[:1]) for t in teams}
    if kind in ("per_dept_top_n", "cross_depts_top_n"):
        lists = {t: _rounded(_ranked(of([t]))[: p["n"]]) for t in teams}
        return lists if kind == "per_dept_top_n" else _rounded(_ranked(of(teams))[: p["n"]])
    if kind in ("sales_statistics", "per_dept_avg_sales"):
        stats = {t: {"department": t, "employees": len(of([t])), "total_sales": round(sum(x["total_sales"]
                 for x in of([t])), 2)} for t in teams}
        for s in stats.values():
            s["avg_sales_per_person"] = round(s["total_sales"] / s["employees"], 2)
        return stats[p["department"]] if kind == "sales_statistics" else {
            t: s["avg_sales_per_person"] for t, s in stats.items()}
    before = quarter_totals(day, p["quarter"] - 1)
    sign = 1 if p["direction"] == "up" else -1
    if kind == "dept_person_qoq_count":
        return {"count": sum(1 for k, x in people.items() if x["department"] == p["department"] and k in before
                             and sign * (x["total_sales"] - before[k]["total_sales"]) > 0)}
    team_totals = [{t: sum(x["total_sales"] for x in q.values() if x["department"] == t) for t in
                    ("Sales_1", "Sales_2", "Sales_3")} for q in (people, before)]
    return {"count": sum(1 for t, total in team_totals[0].items() if sign * (total - team_totals[1][t]) > 0)}


def work(day: Day, task: TaskSpec, manual: bool = True, result: Any = None, where: str = "") -> Outcome:
    """An outcome: the handbook downloaded or not, ``result`` written as the answer file under ``where`` (nothing
    written when None)."""
    if manual:
        shutil.copy(day.cloud_disk / "sales" / MANUAL, day.workspace / MANUAL)
    if result is not None:
        folder = day.workspace / where
        folder.mkdir(parents=True, exist_ok=True)
        (folder / task.check["output_file"]).write_text(json.dumps(result))
    return Outcome(day.workspace)


def _off(value: Any) -> Any:
    """``value`` with every number one more (names kept): the answer's shape with wrong figures."""
    if isinstance(value, dict):
        return {k: _off(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_off(v) for v in value]
    return value + 1 if isinstance(value, (int, float)) else value


@pytest.mark.parametrize("kind", sorted(CASES))
def test_the_right_answer_earns_full_points(day: Day, kind: str) -> None:
    task = generated(day, kind)
    outcome = work(day, task, result=answer(day, kind, task))
    score = FAMILY.evaluate(task, outcome)
    assert FAMILY.evaluate(reread(task), outcome) == score
    assert (score.points, score.full, score.notes) == (points(kind, True, 3 if kind in FOUR else 2),
                                                       4 if kind in FOUR else 3, ())
    assert score.points == score.full


@pytest.mark.parametrize("kind", sorted(CASES))
def test_wrong_figures_earn_the_shape_only(day: Day, kind: str) -> None:
    task = generated(day, kind)
    score = FAMILY.evaluate(task, work(day, task, result=_off(answer(day, kind, task))))
    assert score.points == points(kind, True, 2 if kind in FOUR else 1) and score.notes


@pytest.mark.parametrize("kind", sorted(CASES))
def test_without_the_handbook_the_first_checkpoint_fails(day: Day, kind: str) -> None:
    task = generated(day, kind)
    score = FAMILY.evaluate(task, work(day, task, manual=False, result=answer(day, kind, task)))
    assert score.points == points(kind, False, 3 if kind in FOUR else 2) and score.notes


def test_each_checkpoint_of_a_four_point_type(day: Day) -> None:
    kind = "top_sales_employee"
    task = generated(day, kind)
    right = answer(day, kind, task)
    stranger = [x for x in quarter_totals(day, 1).values() if x["department"] == "Sales_1"][:1]
    cases = [({"manual": False}, 0.0),
             ({}, 0.0),  # the handbook without an answer file
             ({"result": "Sales_3's best"}, points(kind, True, 0)),
             ({"result": _rounded(stranger)}, points(kind, True, 1)),  # the shape, not the department
             ({"result": right, "where": "answers/final"}, points(kind, True, 3))]  # found in a folder
    for parts, expected in cases:
        shutil.rmtree(day.workspace)
        day.workspace.mkdir()
        assert FAMILY.evaluate(task, work(day, task, **parts)).points == expected


def test_one_record_for_a_list_and_a_string_total_are_taken_as_the_reference_takes_them(day: Day) -> None:
    task = generated(day, "top_sales_employee")
    record = answer(day, "top_sales_employee", task)[0]
    outcome = work(day, task, result={**record, "total_sales": str(record["total_sales"])})
    assert FAMILY.evaluate(task, outcome).points == 4.0


def test_the_day_holds_every_quarter_of_every_sales_department(day: Day) -> None:
    task = generated(day, "per_dept_top_n")
    files = sorted(p.name for p in (day.cloud_disk / "sales").glob("*.csv"))
    assert files == sorted(f"sales_Sales_{d}_Q{q}_2024.csv" for d in (1, 2, 3) for q in (1, 2, 3, 4))
    assert (day.cloud_disk / "sales" / MANUAL).read_text().startswith("Stand-in")
    assert re.fullmatch(r"depts_Sales_1-Sales_3_Q[1-4]_top2_per_dept\.json", task.check["output_file"])
    sales_staff = {e.name for t in ("Sales_1", "Sales_2", "Sales_3") for e in day.company.in_department(t)}
    assert set(day.company.rules) == sales_staff
    assert task.check["output_file"] in task.description and "Sales_1, Sales_3" in task.description


@pytest.mark.parametrize(("kind", "params", "named"), [
    ("best_seller", {"department": "Sales_1"}, "task_type"),
    ("top_sales_employee", ["Sales_1"], "task_params"),
    ("top_sales_employee", {"quarter": 2}, "task_params.department"),
    ("top_sales_employee", {"department": "Engineering"}, "task_params.department"),
    ("top_sales_employee", {"department": "../../etc"}, "task_params.department"),
    ("sales_statistics", {"department": "Sales_1", "n": 3}, "task_params.n"),
    ("per_dept_top_n", {"departments": "Sales_1", "n": 2}, "task_params.departments"),
    ("per_dept_top_n", {"departments": [], "n": 2}, "task_params.departments"),
    ("per_dept_top_n", {"departments": ["Sales_1", 2], "n": 2}, r"task_params.departments\[1\]"),
    ("per_dept_top_n", {"departments": ["Sales_1"], "n": 0}, "task_params.n"),
    ("per_dept_top_n", {"departments": ["Sales_1"], "n": True}, "task_params.n"),
    ("per_dept_avg_sales", {"departments": ["Sales_1"], "quarter": 5}, "task_params.quarter"),
    ("per_dept_avg_sales", {"departments": ["Sales_1"], "quarter": "2"}, "task_params.quarter"),
    ("dept_person_qoq_count", {"department": "Sales_1", "quarter": 1}, "task_params.quarter"),
    ("per_dept_extreme_employee", {"departments": ["Sales_1"], "mode": "middle"}, "task_params.mode"),
    ("all_depts_qoq_count", {"direction": "sideways"}, "task_params.direction"),
])
def test_bad_arguments_are_config_errors_naming_them(day: Day, kind: str, params: Any, named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        FAMILY.generate(day, task_type=kind, task_params=params)


def test_defaults_are_the_reference_s(day: Day) -> None:
    (day.reference / "schemas/tasks/sales/templates").mkdir(parents=True)
    (day.reference / "schemas/tasks/sales/templates" / MANUAL).write_text("handbook")
    task = FAMILY.generate(day)
    assert re.fullmatch(r"dept_Sales_1_Q[1-4]_top_sales\.json", task.check["output_file"])


def test_the_same_seed_gives_the_same_day(tmp_path: Path) -> None:
    assert_seeded(tmp_path, lambda day: generated(day, "cross_depts_top_n"))


@pytest.mark.parametrize("shape", sorted(hostile(b"")))
def test_a_hostile_answer_file_earns_at_most_the_first_checkpoint(day: Day, shape: str) -> None:
    task = generated(day, "top_sales_employee")
    hostile(json.dumps(answer(day, "top_sales_employee", task)).encode())[shape](day.workspace /
                                                                                  task.check["output_file"])
    score = FAMILY.evaluate(task, work(day, task))
    assert score.points in (0.0, points("top_sales_employee", True, 0)) and score.full == 4.0


@pytest.mark.parametrize(("kind", "result"), [
    ("top_sales_employee", [{"employee_id": None, "total_sales": float("nan")}]),
    ("top_sales_employee", [{"employee_id": ["x"], "total_sales": "lots"}]),
    ("cross_depts_top_n", [1, "two", None]),
    ("sales_statistics", {"employees": "many", "total_sales": [], "avg_sales_per_person": {}}),
    ("sales_statistics", {"employees": True, "total_sales": float("inf"), "avg_sales_per_person": float("nan")}),
    ("per_dept_avg_sales", {"Sales_1": float("nan"), "Sales_2": "1e999"}),
    ("per_dept_top_n", {"Sales_1": "everyone", "Sales_3": 7}),
    ("dept_person_qoq_count", {"count": [1]}),
    ("all_depts_qoq_count", {"count": True}),
])
def test_wrong_types_score_without_the_answer(day: Day, kind: str, result: Any) -> None:
    task = generated(day, kind)
    score = FAMILY.evaluate(task, work(day, task, result=result))
    assert 0 <= score.points < score.full


def test_a_nan_total_never_matches(day: Day) -> None:
    # In the reference NaN passes every tolerance; here a total must be a finite number.
    task = generated(day, "top_sales_employee")
    right = answer(day, "top_sales_employee", task)
    score = FAMILY.evaluate(task, work(day, task, result=[{**right[0], "total_sales": float("nan")}]))
    assert score.points == points("top_sales_employee", True, 2)
