"""Meeting Book: the booking, the on-time join, the eligible invitees and the busy ones left off score one point
each of four, as the reference's evaluator gives them; the colleagues' reply rules say who is busy."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from occubench.errors import ConfigError
from occubench.traineebench.company import make_company
from occubench.traineebench.families.meeting_book import FAMILY, ROOMS
from occubench.traineebench.family import Attendance, Day, Meeting, Outcome, TaskSpec
from tests.traineebench.conftest import make_day
from tests.traineebench.families.outputs import reread

MANAGERS = {"task_type": "manager", "start_time": "2025-10-01T13:00:00", "last_time": 1.5, "conflict_nums": 2}
DEPARTMENT = {"task_type": "department", "start_time": "2025-10-01T15:00:00", "last_time": 0.5, "conflict_nums": 1}
START = datetime(2025, 10, 1, 13, 0)


def company_day(root: Path, seed: int = 7) -> Day:
    """A day with the reference's company of 50 (the fixture's Marketing has two members besides its manager; the
    reference asks about three)."""
    day = make_day(root, seed)
    day.company = make_company(random.Random(seed))
    return day


def booking(task: TaskSpec, attendees: list[str], title: str = "Sync", hours: float | None = None) -> Meeting:
    start = datetime.fromisoformat(task.check["start"])
    if hours is None:
        hours = (datetime.fromisoformat(task.check["end"]) - start).total_seconds() / 3600
    return Meeting(title, start, hours, "Room_03", tuple(attendees))


def joined(minutes: float, title: str = "Sync", start: datetime = START) -> list[Attendance]:
    return [Attendance(title, start + timedelta(minutes=minutes))]


def rules_saying(day: Day, words: str) -> list[str]:
    return sorted(name for name, rules in day.company.rules.items() if any(words in r for r in rules))


def test_the_manager_variant_asks_every_manager_and_some_cannot_come(day: Day, tmp_path: Path) -> None:
    task = FAMILY.generate(day, **MANAGERS)
    managers = sorted(e.name for e in day.company.employees if "Manager" in e.role)
    busy = rules_saying(day, "cannot come")
    assert FAMILY.name == task.family == "Meeting Book" and task.deadline == datetime(2025, 10, 1, 20, 0)
    assert "2025-10-01T13:00:00" in task.description and "2025-10-01T14:30:00" in task.description
    assert len(busy) == 2 and sorted(busy + rules_saying(day, "say you can come")) == managers
    assert sorted(task.check["busy"]) == busy and sorted(task.check["attending"] + busy) == managers
    assert set(ROOMS) <= set(day.rooms) and len(ROOMS) == 10
    # The same seed draws the same busy managers.
    again = make_day(tmp_path / "again")
    assert FAMILY.generate(again, **MANAGERS) == task and again.company.rules == day.company.rules


def test_everything_right_earns_four_of_four(day: Day) -> None:
    task = FAMILY.generate(day, **MANAGERS)
    right = Outcome(day.workspace, booked=[booking(task, task.check["attending"])], attended=joined(0))
    score = FAMILY.evaluate(task, right)
    assert (score.points, score.full, score.notes) == (4.0, 4.0, ()) and FAMILY.evaluate(reread(task), right) == score


@pytest.mark.parametrize(("who", "minutes", "points", "missed"), [
    ("busy", None, 1.0, 3),       # the booking alone
    ("busy", 5, 2.0, 2),          # and the join, at five minutes past (still on time)
    ("everyone", 6, 2.0, 2),      # the eligible all invited, but the busy ones too; six minutes late
    ("nobody", -30, 3.0, 1),      # nobody busy invited (nobody at all); joined early, which counts
    ("attending", None, 3.0, 1),  # right invitees, never joined
])
def test_each_checkpoint_earns_its_point(day: Day, who: str, minutes: float | None, points: float,
                                         missed: int) -> None:
    task = FAMILY.generate(day, **MANAGERS)
    attendees = {"busy": task.check["busy"], "everyone": task.check["attending"] + task.check["busy"],
                 "nobody": [], "attending": task.check["attending"]}[who]
    outcome = Outcome(day.workspace, booked=[booking(task, attendees)],
                      attended=[] if minutes is None else joined(minutes))
    score = FAMILY.evaluate(task, outcome)
    assert (score.points, score.full, len(score.notes)) == (points, 4.0, missed)


def test_no_booking_for_the_slot_earns_nothing(day: Day) -> None:
    task = FAMILY.generate(day, **MANAGERS)
    for booked in ([], [booking(task, task.check["attending"], hours=1.0)],  # ends too early
                   [Meeting("Sync", START + timedelta(minutes=30), 1.5, "Room_01", tuple(task.check["attending"]))]):
        score = FAMILY.evaluate(task, Outcome(day.workspace, booked=booked, attended=joined(0)))
        assert (score.points, len(score.notes)) == (0.0, 4)
        assert "No meeting was booked" in score.notes[0]


def test_of_two_bookings_for_the_slot_the_last_counts(day: Day) -> None:
    task = FAMILY.generate(day, **MANAGERS)
    good, bad = booking(task, task.check["attending"], "Good"), booking(task, task.check["busy"], "Bad")
    assert FAMILY.evaluate(task, Outcome(day.workspace, booked=[bad, good], attended=joined(0, "Good"))).points == 4
    # The join is looked up by the last booking's title: joining the first one does not count.
    assert FAMILY.evaluate(task, Outcome(day.workspace, booked=[good, bad], attended=joined(0, "Good"))).points == 1


def test_the_department_variant_sends_the_agent_to_the_manager(tmp_path: Path) -> None:
    for conflicts in (1, 2, 3):
        day = company_day(tmp_path / str(conflicts))
        task = FAMILY.generate(day, **{**DEPARTMENT, "conflict_nums": conflicts})
        manager = day.company.manager_of("Marketing").name
        members = [e.name for e in day.company.in_department("Marketing") if e.name != manager]
        asked_about = rules_saying(day, "other work")
        assert len(asked_about) == 3 and len(task.check["busy"]) == conflicts
        assert set(task.check["busy"]) <= set(asked_about)
        assert sorted(task.check["attending"]) == sorted({*members, manager} - set(task.check["busy"]))
        answer = day.company.rules[manager][-1]
        assert all(name in answer for name in asked_about)
        assert ("none of them" in answer) == (conflicts == 3)
        right = Outcome(day.workspace, booked=[booking(task, task.check["attending"])],
                        attended=joined(1, start=datetime(2025, 10, 1, 15, 0)))
        assert FAMILY.evaluate(task, right).points == 4.0


@pytest.mark.parametrize(("change", "argument"), [
    ({"task_type": "team"}, "task_type"),
    ({"task_type": None}, "task_type"),
    ({"start_time": "1 pm"}, "start_time"),
    ({"start_time": 13}, "start_time"),
    ({"last_time": "1.5"}, "last_time"),
    ({"last_time": True}, "last_time"),
    ({"last_time": math.nan}, "last_time"),
    ({"last_time": 0}, "last_time"),
    ({"conflict_nums": 4}, "conflict_nums"),
    ({"conflict_nums": 1.0}, "conflict_nums"),
    ({"room": "Room_01"}, "room"),
])
def test_bad_arguments_are_config_errors_naming_them(day: Day, change: dict[str, Any], argument: str) -> None:
    arguments = {k: v for k, v in {**MANAGERS, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=f"argument {argument}"):
        FAMILY.generate(day, **arguments)


def test_a_company_too_small_for_the_draw_is_a_config_error(day: Day) -> None:
    with pytest.raises(ConfigError, match="argument task_type 'department' needs at least 3 Marketing"):
        FAMILY.generate(day, **DEPARTMENT)  # the fixture's Marketing has two members besides its manager
    day.company.employees[:] = [e for e in day.company.employees if e.department in ("Engineering", "HR")]
    with pytest.raises(ConfigError, match="argument conflict_nums is 3, but the company has only 2 managers"):
        FAMILY.generate(day, **{**MANAGERS, "conflict_nums": 3})


def test_the_defaults_are_the_reference_generators(day: Day) -> None:
    task = FAMILY.generate(day, task_type="manager", start_time="2025-10-01T13:00:00")
    assert task.check["end"] == "2025-10-01T14:00:00" and len(task.check["busy"]) == 3


def test_hostile_bookings_and_joins_score_without_a_crash(day: Day) -> None:
    task = FAMILY.generate(day, **MANAGERS)
    hostile = [Meeting("Sync", START, hours, "Room_01", ("x" * 10_000,)) for hours in (math.nan, 1e300, -1.0)]
    aware = [Attendance("Sync", datetime(2025, 10, 1, 13, 0, tzinfo=timezone.utc)), Attendance("Sync", None)]
    score = FAMILY.evaluate(task, Outcome(day.workspace, booked=hostile, attended=aware))
    assert score.points == 0.0
    score = FAMILY.evaluate(task, Outcome(day.workspace, booked=[booking(task, task.check["attending"])],
                                          attended=aware))
    assert (score.points, score.full) == (3.0, 4.0)
