"""Meeting Attend: a meeting in Room_06 whose notes are a procurement round, summarised into meeting_summary.json
as the task type asks; on time, the file, its JSON and its requests score one point each of four (``none``: on time
alone, of one), as the reference's evaluator gives them."""

from __future__ import annotations

import json
import random
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from occubench.errors import ConfigError
from occubench.traineebench.company import make_company
from occubench.traineebench.families.meeting_attend import FAMILY, TEMPLATE
from occubench.traineebench.family import Attendance, Day, Outcome, TaskSpec
from tests.traineebench.conftest import make_day
from tests.traineebench.families.outputs import hostile, reread

RULES = "Procurement rules (a stand-in): at most 3 items a person, 600 an item, 1000 a person.\n"
ARGUMENTS = {"meeting_start_time": "2025-10-01T09:30:00", "meeting_last_time": 1.0, "task_type": "check_sum",
             "task_level": 2}
START = datetime(2025, 10, 1, 9, 30)
REQUEST = re.compile(r"^- (.+): asks for (\d+) (.+) at (\d+) each$", re.MULTILINE)


def meeting_day(root: Path, seed: int = 7) -> Day:
    """A day with the reference's procurement rules (a stand-in) and its company of 50 (the fixture's departments
    have two members besides the manager, fewer than task level 3 needs)."""
    day = make_day(root, seed)
    day.company = make_company(random.Random(seed))
    (day.reference / TEMPLATE).parent.mkdir(parents=True)
    (day.reference / TEMPLATE).write_text(RULES, encoding="utf-8")
    return day


@pytest.fixture
def mday(tmp_path: Path) -> Day:
    return meeting_day(tmp_path / "day")


def summary_from_notes(day: Day, task_type: str) -> dict[str, Any]:
    """What an agent that heard the meeting writes: every request, or only those within the rules; totals and
    their sum when the type asks for them."""
    entries = []
    for name, quantity, item, price in REQUEST.findall(day.meetings[-1].notes):
        q, p = int(quantity), int(price)
        if task_type.startswith("check") and (q > 3 or p > 600 or q * p > 1000):
            continue
        entries.append({"name": name, "item": item, "quantity": q, "unit_price": p}
                       | ({} if task_type == "write" else {"total": q * p}))
    return {"requirement": entries, "statistics": sum(e.get("total", 0) for e in entries)}


def outcome(day: Day, summary: Any = None, minutes: float | None = 0, raw: str | None = None) -> Outcome:
    if summary is not None or raw is not None:
        (day.workspace / "meeting_summary.json").write_text(raw if raw is not None else json.dumps(summary))
    joined = [] if minutes is None else [Attendance(day.meetings[-1].title, START + timedelta(minutes=minutes))]
    return Outcome(day.workspace, attended=joined)


def test_the_meeting_is_on_the_calendar_with_the_procurement_round(mday: Day) -> None:
    task = FAMILY.generate(mday, **ARGUMENTS)
    meeting = mday.meetings[-1]
    assert FAMILY.name == task.family == "Meeting Attend" and task.deadline == datetime(2025, 10, 1, 20, 0)
    assert (meeting.room, meeting.start, meeting.hours) == ("Room_06", START, 1.0) and "Room_06" in mday.rooms
    assert "Room_06" in task.description and "2025-10-01T10:30:00" in task.description
    assert (mday.cloud_disk / "financial/procurement_rules.md").read_text() == RULES
    department = meeting.title.split()[0]
    members = {e.name for e in mday.company.in_department(department)} - {mday.company.manager_of(department).name}
    heard = REQUEST.findall(meeting.notes)
    assert {name for name, *_ in heard} == members == set(meeting.attendees[1:])
    assert sum(not r["reasonable"] for r in task.check["requests"]) == 2
    assert "procurement_rules.md" in meeting.notes and '"statistics"' in meeting.notes


@pytest.mark.parametrize("task_type", ["write", "sum", "check", "check_sum"])
def test_a_right_summary_on_time_earns_four_of_four(mday: Day, task_type: str) -> None:
    task = FAMILY.generate(mday, **{**ARGUMENTS, "task_type": task_type})
    done = outcome(mday, summary_from_notes(mday, task_type))
    score = FAMILY.evaluate(task, done)
    assert (score.points, score.full, score.notes) == (4.0, 4.0, ()) and FAMILY.evaluate(reread(task), done) == score


def test_task_type_none_scores_the_join_alone(mday: Day) -> None:
    task = FAMILY.generate(mday, **{**ARGUMENTS, "task_type": "None"})
    assert mday.meetings[-1].notes == "" and task.check["requests"] == []
    assert FAMILY.evaluate(task, outcome(mday, minutes=5)) == FAMILY.evaluate(task, outcome(mday, minutes=-20))
    assert FAMILY.evaluate(task, outcome(mday, minutes=-20)).points == 1.0
    late = FAMILY.evaluate(task, outcome(mday, minutes=6))
    assert (late.points, late.full, len(late.notes)) == (0.0, 1.0, 1)


@pytest.mark.parametrize(("case", "points"), [
    ("on time, nothing written", 1.0),
    ("a file that is not JSON, late", 1.0),
    ("JSON of the wrong shape, late", 2.0),
    ("the right summary, late", 3.0),
    ("the right summary, never there", 3.0),
    ("a directory in the file's place", 2.0),
])
def test_each_checkpoint_earns_its_point(mday: Day, case: str, points: float) -> None:
    task = FAMILY.generate(mday, **ARGUMENTS)
    right = summary_from_notes(mday, "check_sum")
    if case.startswith("a directory"):
        (mday.workspace / "meeting_summary.json").mkdir()
    made = {"on time, nothing written": lambda: outcome(mday),
            "a file that is not JSON, late": lambda: outcome(mday, raw="requirement: none", minutes=30),
            "JSON of the wrong shape, late": lambda: outcome(mday, [right], minutes=30),
            "the right summary, late": lambda: outcome(mday, right, minutes=30),
            "the right summary, never there": lambda: outcome(mday, right, minutes=None),
            "a directory in the file's place": lambda: outcome(mday)}[case]()
    score = FAMILY.evaluate(task, made)
    assert (score.points, score.full, len(score.notes)) == (points, 4.0, 4 - points)


def test_wrong_and_near_answers_score_as_the_reference_compares(mday: Day) -> None:
    task = FAMILY.generate(mday, **ARGUMENTS)
    right = summary_from_notes(mday, "check_sum")
    every = summary_from_notes(mday, "sum")  # the requests that break the rules kept in
    assert FAMILY.evaluate(task, outcome(mday, every)).points == 3.0
    near = json.loads(json.dumps(right))
    near["requirement"][0] |= {"name": near["requirement"][0]["name"].upper(), "total": near["requirement"][0]["total"]
                               + 1, "quantity": float(near["requirement"][0]["quantity"]) - 0.5}
    near["statistics"] = "not compared"
    assert FAMILY.evaluate(task, outcome(mday, near)).points == 4.0
    off = json.loads(json.dumps(right))
    off["requirement"][-1]["total"] += 2
    assert FAMILY.evaluate(task, outcome(mday, off)).points == 3.0
    twice = {"requirement": right["requirement"][:1] * len(right["requirement"])}
    assert FAMILY.evaluate(task, outcome(mday, twice)).points == 3.0


def test_check_asks_for_totals_but_does_not_compare_them(tmp_path: Path) -> None:
    day = meeting_day(tmp_path)
    task = FAMILY.generate(day, **{**ARGUMENTS, "task_type": "check"})
    summary = summary_from_notes(day, "check")
    for entry in summary["requirement"]:
        entry["total"] = "unknown"
    assert '"total"' in day.meetings[-1].notes
    assert FAMILY.evaluate(task, outcome(day, summary)).points == 4.0


@pytest.mark.parametrize("raw", [
    '{"requirement": [{"name": "x", "item": "y", "quantity": NaN, "unit_price": Infinity}]}',
    '{"requirement": "everything"}', '{"requirement": [1, 2]}', '"text"', "[" * 100_000, "null",
    '{"requirement": [{"name": true, "item": 5, "quantity": true, "unit_price": 1e999}]}',
    '{"requirement": [{"quantity": 100000000000000000000000000000000000000000000000000000000000000000000000000000000000'
    '0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000'
    '00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000}]}',
    " " * (20 << 20) + "{}",
])
def test_hostile_summaries_score_without_a_crash(mday: Day, raw: str) -> None:
    task = FAMILY.generate(mday, **ARGUMENTS)
    score = FAMILY.evaluate(task, outcome(mday, raw=raw))
    assert score.points in (2.0, 3.0) and score.points < score.full


@pytest.mark.parametrize("shape", sorted(hostile(b"")))
def test_hostile_files_in_the_summarys_place_are_read_as_no_summary(tmp_path: Path, shape: str) -> None:
    day = meeting_day(tmp_path)
    task = FAMILY.generate(day, **ARGUMENTS)
    hostile(json.dumps(summary_from_notes(day, "check_sum")).encode())[shape](day.workspace / "meeting_summary.json")
    score = FAMILY.evaluate(task, outcome(day))
    # On time, and something there (a link to a right summary outside is not followed); NaN is JSON, as there.
    assert score.points == (3.0 if shape == "NaN" else 2.0)


@pytest.mark.parametrize(("change", "argument"), [
    ({"meeting_start_time": None}, "meeting_start_time"),
    ({"meeting_start_time": "half past nine"}, "meeting_start_time"),
    ({"meeting_last_time": -1.0}, "meeting_last_time"),
    ({"meeting_last_time": [1]}, "meeting_last_time"),
    ({"task_type": "summarise"}, "task_type"),
    ({"task_type": 3}, "task_type"),
    ({"task_level": 4}, "task_level"),
    ({"task_level": "1"}, "task_level"),
    ({"level": 1}, "level"),
])
def test_bad_arguments_are_config_errors_naming_them(mday: Day, change: dict[str, Any], argument: str) -> None:
    arguments = {k: v for k, v in {**ARGUMENTS, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=f"argument {argument}"):
        FAMILY.generate(mday, **arguments)


def test_missing_reference_rules_or_too_few_members_are_config_errors(day: Day, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="procurement_rules.md"):
        FAMILY.generate(day, **ARGUMENTS)
    (day.reference / TEMPLATE).parent.mkdir(parents=True)
    (day.reference / TEMPLATE).write_text(RULES)
    with pytest.raises(ConfigError, match="argument task_level is 3, but the .* department has only 2 members"):
        FAMILY.generate(day, **{**ARGUMENTS, "task_level": 3})


def test_the_same_seed_makes_the_same_meeting(tmp_path: Path) -> None:
    days = [meeting_day(tmp_path / name) for name in ("one", "two")]
    tasks: list[TaskSpec] = [FAMILY.generate(d, **ARGUMENTS) for d in days]
    assert tasks[0] == tasks[1] and days[0].meetings == days[1].meetings
    other = meeting_day(tmp_path / "other", seed=8)
    assert FAMILY.generate(other, **ARGUMENTS).check != tasks[0].check
