"""Attendance Statistics against the reference's scoring: the source files copied (30% of the full points), the
question's checkpoints sharing 70%, the full points being the number of checkpoints; and its answer key, derived
here again from the files the agent gets."""

from __future__ import annotations

import csv
import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from occubench.errors import ConfigError
from occubench.traineebench.families.attendance import FAMILY, expected, weighted
from occubench.traineebench.family import Day, Outcome, TaskSpec
from tests.traineebench.conftest import make_day

SOURCES = ("attendance_2025-12.csv", "manuals_for_attendance_rules.md", "staff_roster.json")
CALM = {"p_late": 0, "p_early": 0, "p_absence": 0, "p_missing_in": 0, "p_missing_out": 0}


def make(day: Day, kind: str, level: str = "L3", **params: Any) -> TaskSpec:
    return FAMILY.generate(day, task_type_name=kind, task_params=params or {"department": "Finance"},
                           difficulty={"level": level})


def scored(task: TaskSpec, day: Day, answer: Any, sources: bool = True, raw: bool = False) -> tuple[float, float]:
    for name in SOURCES:
        target = day.workspace / name
        if sources and not target.exists():
            shutil.copyfile(day.cloud_disk / "attendance" / name, target)
        elif not sources and target.exists():
            target.unlink()
    path = day.workspace / task.check["output_file"]
    if answer is not None:
        path.write_text(answer if raw else json.dumps(answer))
    elif path.exists():
        path.unlink()
    score = FAMILY.evaluate(task, Outcome(day.workspace))
    assert 0 <= score.points <= score.full
    assert score.points < score.full or not score.notes
    return score.points, score.full


def answer(task: TaskSpec) -> Any:
    """The right answer, in the form the task asks for."""
    want, kind = task.check["expected"], task.check["task_type"]
    if kind == "late_early_employee":
        metric = task.check["mode"].rpartition("_")[2]
        return [{"employee_id": w, "name": n, f"{metric}_days": d, f"{metric}_minutes_total": m}
                for w, n, d, m in want]
    if kind == "top_percent_employees":
        return [{"employee_id": w, "name": n} for w, n in want]
    if kind == "employees_with_most_remote_days":
        return [{"employee_id": w, "name": n, "remote_days": r} for w, n, r in want]
    if kind == "employees_with_perfect_attendance":
        return [{"employee_id": w, "name": n, "department": d} for w, n, d in want]
    return want if isinstance(want, dict) else {kind: want}


# -- the answer key follows from the files -------------------------------------------------------------------


def solve(day: Day, flex: bool) -> dict[str, dict[str, int]]:
    """Each employee's month read from the cloud disk's files as an agent would, under L3's rules (09:00-18:00,
    5 minutes' grace) or, with ``flex``, L4's (10:00-20:00, late after 30 minutes, at least 9 hours net of lunch)."""
    folder = day.cloud_disk / "attendance"
    people = {p["employee_id"]: p for p in json.loads((folder / "staff_roster.json").read_text())}
    days: dict[tuple[str, str], list[dict[str, str]]] = {}
    with open(folder / "attendance_2025-12.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            days.setdefault((row["employee_id"], row["timestamp"][:10]), []).append(row)
    start, end, minute = (10, 20, timedelta(minutes=1)) if flex else (9, 18, timedelta(minutes=1))
    totals = {who: dict.fromkeys(("late_days", "late_minutes", "early_days", "absence_days", "remote_days"), 0)
              for who in people}
    for who, total in totals.items():
        for number in range(1, 32):
            date = datetime(2025, 12, number)
            if date.weekday() > 4:
                continue
            punches = days.get((who, date.strftime("%Y-%m-%d")), [])
            ins = [datetime.fromisoformat(p["timestamp"]) for p in punches if p["io"] == "in"]
            outs = [datetime.fromisoformat(p["timestamp"]) for p in punches if p["io"] == "out"]
            if not ins or not outs:
                total["absence_days"] += 1
                continue
            came, left = min(ins), max(outs)
            total["remote_days"] += any(json.loads(p["tags"])["remote"] for p in punches)
            opening = date.replace(hour=start)
            if came > opening + (30 if flex else 5) * minute:
                total["late_days"] += 1
                total["late_minutes"] += (came - opening) // minute
            short = 9 * 60 - ((left - came) // minute - 60) if flex else (date.replace(hour=end) - left) // minute
            total["early_days"] += short > (0 if flex else 5)
    return {who: {**t, "department": people[who]["department"], "name": people[who]["name"]}
            for who, t in totals.items()}


@pytest.mark.parametrize("level", ["L3", "L4"])
def test_the_answer_key_follows_from_the_files_the_agent_gets(tmp_path: Path, level: str) -> None:
    def task(kind: str, **params: Any) -> TaskSpec:
        """The question asked of the same month: the data drawn does not depend on the question."""
        day = make_day(tmp_path / f"{kind}{len(list(tmp_path.iterdir()))}", seed=7)
        made = make(day, kind, level, **params)
        assert (day.cloud_disk / "attendance" / SOURCES[0]).read_bytes() == month
        return made

    first = make_day(tmp_path / "first", seed=7)
    make(first, "has_late_or_early", level)
    month = (first.cloud_disk / "attendance" / SOURCES[0]).read_bytes()
    solved = solve(first, flex=level == "L4")
    finance = {who: t for who, t in solved.items() if t["department"] == "Finance"}
    assert task("total_absence_days").check["expected"] == sum(t["absence_days"] for t in finance.values())
    most = max(t["remote_days"] for t in finance.values())
    assert task("employees_with_most_remote_days").check["expected"] == [
        [who, t["name"], most] for who, t in finance.items() if t["remote_days"] == most]
    late = max((t["late_days"], t["late_minutes"]) for t in solved.values())
    assert task("late_early_employee", mode="most_late", department="all").check["expected"] == [
        [who, t["name"], *late] for who, t in solved.items() if (t["late_days"], t["late_minutes"]) == late]
    assert task("employees_with_perfect_attendance").check["expected"] == [
        [who, t["name"], "Finance"] for who, t in finance.items()
        if not (t["late_days"] or t["early_days"] or t["absence_days"])]


def row(who: str, department: str, late: tuple[int, int] = (0, 0), early: tuple[int, int] = (0, 0),
        absent: int = 0, remote: int = 0, overtime: int = 0) -> dict[str, Any]:
    return {"employee_id": who, "name": who.lower(), "department": department, "workdays": 20,
            "present_days": 20 - absent, "absence_days": absent, "late_days": late[0], "late_minutes_total": late[1],
            "early_days": early[0], "early_minutes_total": early[1], "overtime_minutes_total": overtime,
            "remote_days": remote}


TOTALS = [row("A", "Finance", late=(3, 40), absent=1, remote=4, overtime=90),
          row("B", "Finance", late=(3, 40), early=(1, 10), remote=4),
          row("C", "Finance", late=(1, 50)),
          row("D", "Product", late=(2, 5), early=(2, 30), absent=2, remote=1, overtime=30),
          row("E", "Product")]


@pytest.mark.parametrize(("kind", "params", "want"), [
    ("late_early_employee", {"mode": "most_late"}, [["A", "a", 3, 40], ["B", "b", 3, 40]]),
    ("late_early_employee", {"mode": "least_early"}, [["A", "a", 0, 0], ["C", "c", 0, 0], ["E", "e", 0, 0]]),
    ("top_percent_employees", {"percent": 20, "metric": "late"}, [["A", "a"], ["B", "b"]]),
    ("top_percent_employees", {"percent": 40, "metric": "early"}, [["B", "b"], ["D", "d"]]),
    # the third of five is at (0 days, 0 minutes): the bar is 0 and everyone clears it, as in the reference
    ("top_percent_employees", {"percent": 50, "metric": "early"}, [[w, w.lower()] for w in "ABCDE"]),
    ("avg_late_early_days", {}, {"avg_late_days": 1.8, "avg_early_days": 0.6}),
    ("has_late_or_early", {}, True),
    ("total_absence_days", {}, 3),
    ("average_overtime_hours", {}, 0.4),
    ("employees_with_most_remote_days", {}, [["A", "a", 4], ["B", "b", 4]]),
    ("employees_with_perfect_attendance", {}, [["E", "e", "Product"]]),
    ("attendance_statistics", {}, {"employees": 5, "avg_late_days": 1.8, "avg_early_days": 0.6,
                                   "avg_absence_days": 0.6, "attendance_rate": 97.0}),
])
def test_each_questions_answer_on_hand_made_totals(kind: str, params: dict, want: Any) -> None:
    assert expected(kind, {"department": "all", **params}, TOTALS) == want


def test_department_statistics_and_nobody_in_a_top_list() -> None:
    assert expected("attendance_statistics", {"department": "Finance"}, TOTALS) == {
        "employees": 3, "avg_late_days": 2.33, "avg_early_days": 0.33, "avg_absence_days": 0.33,
        "attendance_rate": 98.33}
    assert expected("top_percent_employees", {"department": "Product", "percent": 10, "metric": "late"},
                    [row("E", "Product")]) == []


# -- the reference's points ---------------------------------------------------------------------------------


def test_the_weighting_gives_30_percent_to_the_sources_and_shares_the_rest() -> None:
    assert weighted(2, 3, True) == 3.0 and weighted(0, 3, True) == 0.9 and weighted(1, 3, False) == 1.05
    assert weighted(0, 1, True) == 0.3 and weighted(5, 6, True) == 6.0 and weighted(0, 6, False) == 0.0


@pytest.mark.parametrize("kind", ["avg_late_early_days", "has_late_or_early", "total_absence_days",
                                  "average_overtime_hours", "attendance_statistics", "late_early_employee",
                                  "employees_with_most_remote_days", "employees_with_perfect_attendance"])
def test_the_right_answer_with_the_sources_earns_full_points(day: Day, kind: str) -> None:
    task = make(day, kind, department="Finance")
    points, full = scored(task, day, answer(task))
    assert points == full == task_checkpoints(task)


def task_checkpoints(task: TaskSpec) -> int:
    kind, want = task.check["task_type"], task.check["expected"]
    per = {"late_early_employee": 3, "employees_with_most_remote_days": 2, "employees_with_perfect_attendance": 2}
    if kind in per:
        return 1 + per[kind] * len(want) if want else 2
    return {"avg_late_early_days": 3, "attendance_statistics": 6}.get(kind, 2)


def test_the_sources_alone_and_the_answer_alone(day: Day) -> None:
    task = make(day, "avg_late_early_days")
    assert scored(task, day, None) == (0.9, 3)
    assert scored(task, day, answer(task), sources=False) == (2.1, 3)
    half = {**answer(task), "avg_early_days": task.check["expected"]["avg_early_days"] + 1}
    assert scored(task, day, half) == (1.95, 3)
    assert scored(task, day, None, sources=False) == (0, 3)


def test_statistics_earn_a_share_per_field(day: Day) -> None:
    task = make(day, "attendance_statistics")
    right = answer(task)
    assert scored(task, day, {"employees": right["employees"]}) == (2.64, 6)
    assert scored(task, day, {**right, "attendance_rate": right["attendance_rate"] / 100}) == (5.16, 6)
    assert scored(task, day, {**right, "avg_late_days": str(right["avg_late_days"])}) == (6, 6)


def test_a_top_percent_list_reaches_65_percent_at_best(day: Day) -> None:
    task = make(day, "top_percent_employees", percent=20, metric="late", department="all")
    count = len(task.check["expected"])
    assert count == 16
    assert scored(task, day, None) == (0.3 * 17, 17)
    points, full = scored(task, day, answer(task))
    assert full == 33 and points == pytest.approx(0.65 * 33)
    assert scored(task, day, answer(task)[:8])[0] == pytest.approx(0.3 * 33 + 8 * 0.7 * 33 / 32)


def test_nobody_late_leaves_the_top_list_worth_the_first_checkpoint_only(day: Day) -> None:
    task = FAMILY.generate(day, task_type_name="top_percent_employees", difficulty={"rng_cfg": CALM},
                           task_params={"percent": 10, "metric": "early"})
    assert task.check["expected"] == []
    assert scored(task, day, []) == (0.3, 1)
    assert scored(task, day, [{"employee_id": "E1001", "name": "x"}]) == (0.3, 1)


def test_with_everyone_perfect_the_key_lists_them_all(day: Day) -> None:
    task = FAMILY.generate(day, task_type_name="employees_with_perfect_attendance", difficulty={"rng_cfg": CALM},
                           task_params={"department": "Sales_1"})
    assert len(task.check["expected"]) == 10
    assert scored(task, day, answer(task)) == (21, 21)
    assert scored(task, day, [{**a, "department": "Sales"} for a in answer(task)]) == (13.65, 21)  # 6.3 + 10 x 0.735


def test_listed_employees_score_presence_then_each_number(day: Day) -> None:
    task = make(day, "late_early_employee", mode="most_late", department="all")
    (who, name, days, minutes), = task.check["expected"]
    points = scored(task, day, [{"employee_id": who, "name": name, "late_days": days}])
    assert points == (pytest.approx(1.2 + 2 * 2.8 / 3), 4)
    assert scored(task, day, {"employee_id": who, "name": name, "late_days": days,
                              "late_minutes_total": minutes}) == (4, 4)
    assert scored(task, day, [{"employee_id": who, "name": "someone else", "late_days": days}]) == (1.2, 4)


@pytest.mark.parametrize("output", ["not json", "[" * 50_000, "null", '"text"', "12", "[1, 2]",
                                    '{"avg_late_days": NaN, "avg_early_days": Infinity}',
                                    '{"avg_late_days": 1e999, "avg_early_days": "0.5"}',
                                    '{"avg_late_days": ' + "9" * 5000 + "}",
                                    '{"avg_late_days": [1], "avg_early_days": {"a": 1}}'])
def test_hostile_answers_score_the_sources_only(day: Day, output: str) -> None:
    task = FAMILY.generate(day, task_type_name="avg_late_early_days", task_params={"department": "Product"})
    assert 0 not in task.check["expected"].values()  # a missing figure counts as 0: the seed avoids a 0 here
    assert scored(task, day, output, raw=True) == (0.9, 3)


@pytest.mark.parametrize("kind", ["late_early_employee", "top_percent_employees", "employees_with_most_remote_days",
                                  "employees_with_perfect_attendance", "attendance_statistics", "has_late_or_early",
                                  "total_absence_days", "average_overtime_hours"])
@pytest.mark.parametrize("output", ['[{"employee_id": [1], "name": {"a": 1}}, 7, "x", null]',
                                    '[{"employee_id": "E1", "name": "a"}, {"name": "b"}]',
                                    '{"employees": NaN, "attendance_rate": 1e999, "remote_days": "x"}',
                                    '[' + '{"employee_id": "E1001"},' * 20_000 + '{}]'])
@pytest.mark.slow
def test_hostile_answers_never_crash_or_pass_full(day: Day, kind: str, output: str) -> None:
    task = make(day, kind, department="all")
    points, full = scored(task, day, output, raw=True)
    # entries without an employee_id and a name are passed over: they name nobody, right when nobody fits
    assert points < full or task.check["expected"] == []


def test_the_files_the_rules_and_the_same_seed(tmp_path: Path) -> None:
    made = []
    for run in ("one", "two"):
        day = make_day(tmp_path / run, seed=21)
        task = FAMILY.generate(day, task_type_name="late_early_employee", difficulty={"level": "L5"},
                               task_params={"mode": "most_early", "department": "Human Resources"})
        files = {p.name: p.read_bytes() for p in (day.cloud_disk / "attendance").iterdir()}
        made.append((task, day.company.rules, files))
    assert made[0] == made[1]
    task, rules, files = made[0]
    assert sorted(files) == sorted([*SOURCES, "approvals.json"])
    assert task.check["output_file"] == "dept_Human Resources_most_early.json"
    assert task.check["output_file"] in task.description and "most earliness" in task.description
    roster = json.loads(files["staff_roster.json"])
    assert sorted({len([p for p in roster if p["department"] == d]) for d in {p["department"] for p in roster}}) == [
        10, 12]
    managers = [name for name, said in rules.items() if "attendance/manuals_for_attendance_rules.md" in said[0]]
    assert managers and all("Manager" in name for name in managers)


def test_without_make_ups_there_is_no_approvals_file(day: Day) -> None:
    make(day, "has_late_or_early", level="L2")
    assert not (day.cloud_disk / "attendance" / "approvals.json").exists()


@pytest.mark.parametrize(("arguments", "named"), [
    ({"task_type_name": "lateness"}, "task_type_name"),
    ({"task_params": ["Finance"]}, "task_params"),
    ({"task_type_name": "total_absence_days", "task_params": {"mode": "most_late"}}, "mode"),
    ({"task_params": {"department": "Sales"}}, "task_params.department"),
    ({"task_params": {"mode": "most"}}, "task_params.mode"),
    ({"task_type_name": "top_percent_employees", "task_params": {"metric": "absent"}}, "task_params.metric"),
    ({"task_type_name": "top_percent_employees", "task_params": {"percent": "20"}}, "task_params.percent"),
    ({"task_type_name": "top_percent_employees", "task_params": {"percent": 0}}, "task_params.percent"),
    ({"difficulty": "L2"}, "difficulty"),
    ({"difficulty": {"level": "L9"}}, "difficulty.level"),
    ({"difficulty": {"level": "L2", "speed": 1}}, "speed"),
    ({"difficulty": {"rng_cfg": {"p_late": 2}}}, "difficulty.rng_cfg.p_late"),
    ({"difficulty": {"rng_cfg": {"p_lunch": 0.1}}}, "p_lunch"),
    ({"deadline": "2025-10-01T20:00:00"}, "deadline"),
])
def test_bad_arguments_are_config_errors_naming_the_argument(day: Day, arguments: dict, named: str) -> None:
    with pytest.raises(ConfigError, match=repr(named)):
        FAMILY.generate(day, **arguments)
