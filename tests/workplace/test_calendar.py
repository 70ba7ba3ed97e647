"""The meeting-room calendar (``occubench.workplace.calendar``): rooms free in office hours and big enough, bookings
refused for a taken room, a slot already past or a participant in another meeting (each one's clash listed), only
the agent's own bookings cancellable, joins recorded at the day's clock, which then moves to the meeting's end, and
on time up to five minutes after the start; played directly and through a Trainee-Bench day's tools, and the
Meeting Book and Meeting Attend families scoring such plays in the reference's points."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from occubench.core.tools import ToolError
from occubench.traineebench.company import make_company
from occubench.traineebench.families import family, meeting_attend, meeting_book
from occubench.traineebench.families.meeting_book import add_rooms
from occubench.traineebench.plugin import TOOLSET
from occubench.workplace.calendar import LATENESS, Calendar, moment, on_time
from occubench.workplace.environment import WorkplaceEnvironment
from occubench.workplace.people import AGENT
from occubench.workplace.world import Attendance, DayTask, Meeting, Score, World
from tests.traineebench.conftest import make_day
from tests.traineebench.families.test_meeting_attend import meeting_day, summary_from_notes

START = datetime(2025, 10, 1, 13, 0)
TEAM = ("Finance Manager", "HR Manager")
BOOK = {"task_type": "manager", "start_time": "2025-10-01T13:00:00", "last_time": 1.5, "conflict_nums": 2}


@pytest.fixture
def day(tmp_path: Path) -> World:
    """A Trainee-Bench day (it starts at 8:00) with the reference's ten rooms, each holding the whole company."""
    made = make_day(tmp_path / "day")
    add_rooms(made)
    return made


def at(moment: datetime) -> str:
    return moment.isoformat()


def env_of(day: World, tasks: list[DayTask] | None = None) -> WorkplaceEnvironment:
    return WorkplaceEnvironment(day, tasks or [], TOOLSET, family)  # the calendar runs no shell command


def busy_day(day: World) -> WorkplaceEnvironment:
    """A day with a meeting already in Room_06 from 13:00 to 14:00, Finance's manager in it."""
    day.meetings.append(Meeting("Budget review", START, 1.0, "Room_06", ("Finance Manager", "Finance Accountant"),
                                "Budgets are due on Friday."))
    return env_of(day)


def wait_until(env: WorkplaceEnvironment, moment: datetime) -> None:
    """Skip to ``moment`` (the jump's own minute of the clock comes after it)."""
    answer = env.call("jump_time", {"minutes": int((moment - env.now) / timedelta(minutes=1))})
    assert "error" not in answer, answer


def book(env: WorkplaceEnvironment, attendees: list[str], room: str = "Room_02", start: datetime = START,
         hours: float = 1.0) -> dict[str, Any]:
    return env.call("book_meeting", {"attendees": attendees, "room_name": room, "start": at(start),
                                     "end": at(start + timedelta(hours=hours))})


# -- the calendar itself -----------------------------------------------------------------------------------------

def test_the_calendar_keeps_its_office_hours_room_sizes_and_the_agent_s_meetings() -> None:
    def on(hour: int, minute: int = 0) -> datetime:
        return datetime(2025, 10, 1, hour, minute)

    stand_up = Meeting("Stand-up", on(7, 30), 0.5, "Small", ("Bo Li",))
    planning = Meeting("Planning", on(11), 1.0, "Large", (AGENT, "Bo Li"))
    calendar = Calendar({"Small": 3, "Large": 12}, [stand_up, planning], hours=(7, 19))
    assert calendar.available(on(7), on(8)) == ["Large"]  # the stand-up holds Small from 7:30
    assert calendar.available(on(9), on(10), seats=4) == ["Large"] and calendar.available(on(9), on(10), 13) == []
    with pytest.raises(ToolError, match="between 07:00 and 19:00"):
        calendar.available(on(18, 30), on(19, 30))
    with pytest.raises(ToolError, match="Small holds 3 people, you and 3 invitees are more"):
        calendar.book(["Ann Wu", "Bo Li", "Cy Ng"], "Small", on(9), on(10), now=on(8))
    with pytest.raises(ToolError, match="already passed"):
        calendar.book(["Bo Li"], "Small", on(9), on(10), now=on(9, 1))
    mine = calendar.book(["Bo Li"], "Small", on(9), on(10), now=on(8, 15))
    assert (mine.booked_at, mine.attendees, mine.hours) == (on(8, 15), ("Bo Li",), 1.0)
    assert stand_up.booked_at is None  # on the calendar when the day began
    # The meetings the agent is expected at or booked, by start; the stand-up is not the agent's.
    assert calendar.meetings() == [mine, planning] and calendar.booked() == [mine]
    with pytest.raises(ToolError, match="only the meetings you booked"):
        calendar.cancel("Large", on(11), on(12))
    assert calendar.cancel("Small", on(9), on(10)) == mine and calendar.booked() == []


def test_a_join_is_on_time_up_to_five_minutes_after_the_start_and_the_last_one_counts() -> None:
    start = datetime(2025, 10, 1, 10, 0)
    joins = [Attendance("Review", start - timedelta(minutes=30)), Attendance("Review", start + LATENESS),
             Attendance("Other", start + timedelta(hours=1)), Attendance("Review", None)]
    assert LATENESS == timedelta(minutes=5) and on_time(joins, "Review", start)
    assert not on_time([*joins, Attendance("Review", start + timedelta(minutes=6))], "Review", start)
    assert on_time(joins, "Review", start, by=start)  # the early join alone, by the start
    assert not on_time(joins, "Review", start, by=start - timedelta(minutes=31))  # nobody there by then
    assert not on_time(joins, "Other", start) and not on_time(joins, "Nothing", start)
    aware = [Attendance("Review", start.replace(tzinfo=timezone.utc))]  # never compared with a naive start
    assert not on_time(aware, "Review", start)


def test_a_time_is_a_local_iso_date_and_time_or_hh_mm_on_the_day_s_date() -> None:
    day = datetime(2025, 10, 1, 8, 0)
    assert moment("start", "2025-10-02T09:15:00", day) == datetime(2025, 10, 2, 9, 15)
    assert moment("start", "13:00", day) == datetime(2025, 10, 1, 13, 0)
    assert moment("end", "2025-10-01T16:45", day) == datetime(2025, 10, 1, 16, 45)
    for text in ("", "1 pm", "25:00", "tomorrow at ten", "2025-10-01T10:00:00+02:00", "\x00" * 10_000):
        with pytest.raises(ToolError, match="start must be") as raised:
            moment("start", text, day)
        assert len(str(raised.value)) < 200


# -- the calendar through a day's tools --------------------------------------------------------------------------

def test_rooms_are_free_in_business_hours_unless_a_meeting_holds_them(day: World) -> None:
    env = busy_day(day)
    rooms = [f"Room_{n:02d}" for n in range(1, 11)]
    assert env.call("get_available_rooms", {"start": "2025-10-01T10:00:00", "end": "2025-10-01T11:00:00"})[
        "available"] == rooms
    overlapping = env.call("get_available_rooms", {"start": "2025-10-01T13:30:00", "end": "2025-10-01T15:00:00"})
    assert overlapping["available"] == [r for r in rooms if r != "Room_06"]
    # Back to back is no overlap.
    assert "Room_06" in env.call("get_available_rooms", {"start": "2025-10-01T14:00:00",
                                                         "end": "2025-10-01T14:30:00"})["available"]
    for start, end in (("2025-10-01T08:30:00", "2025-10-01T09:30:00"), ("2025-10-01T16:30:00", "2025-10-01T17:01:00"),
                       ("2025-10-01T11:00:00", "2025-10-01T10:00:00"), ("2025-10-01T16:00:00", "2025-10-02T10:00:00")):
        answer = env.call("get_available_rooms", {"start": start, "end": end})
        assert answer["error"] == "tool_error" and ("9:00" in answer["message"] or "after" in answer["message"])
    assert "available" in env.call("get_available_rooms", {"start": "2025-10-01T16:00", "end": "2025-10-01T17:00"})


def test_a_booking_fails_for_a_taken_room_or_any_participant_in_another_meeting(day: World) -> None:
    env = busy_day(day)
    taken = book(env, ["HR Manager"], room="Room_06", start=START + timedelta(minutes=30))
    assert taken["error"] == "tool_error" and "Room_06 is taken" in taken["message"]
    clash = book(env, ["HR Manager", "Finance Manager", "Finance Accountant"])
    assert clash["error"] == "tool_error"
    assert "Finance Manager: 2025-10-01T13:00 to 2025-10-01T14:00 in Room_06" in clash["message"]
    assert "Finance Accountant:" in clash["message"] and "HR Manager:" not in clash["message"]
    assert "error" in book(env, ["HR Manager"], room="Room_11")
    booked = book(env, [" HR Manager", "HR Manager", "", "Sales_1 Sales Manager"])
    assert booked["attendees"] == ["HR Manager", "Sales_1 Sales Manager"] and booked["room"] == "Room_02"
    # The agent is in its own meeting now: another at the same time clashes for the agent.
    again = book(env, ["Product Manager"], room="Room_03")
    assert AGENT in again["message"]
    assert [m.title for m in env.outcome().booked] == [booked["booked"]]


def test_only_the_agent_s_own_bookings_can_be_cancelled(day: World) -> None:
    env = busy_day(day)
    slot = {"room_name": "Room_06", "start": at(START), "end": at(START + timedelta(hours=1))}
    refused = env.call("cancel_meeting", slot)
    assert refused["error"] == "tool_error" and "only the meetings you booked" in refused["message"]
    mine = book(env, list(TEAM), room="Room_02", start=START + timedelta(hours=2))
    assert "error" in env.call("cancel_meeting", {**slot, "room_name": "Room_02"})  # not that slot
    cancelled = env.call("cancel_meeting", {"room_name": "Room_02", "start": mine["start"], "end": mine["end"]})
    assert cancelled["cancelled"] == mine["booked"] and env.outcome().booked == []
    rebooked = book(env, list(TEAM), room="Room_02", start=START + timedelta(hours=2))
    assert rebooked["booked"] != mine["booked"]  # a join of the cancelled one never counts for this one
    assert "error" not in env.call("attend_meeting", slot)  # the day's meeting stands


def test_attending_records_the_join_moves_the_clock_and_gives_the_notes(day: World) -> None:
    env = busy_day(day)
    mine = book(env, list(TEAM), start=datetime(2025, 10, 1, 9, 0))  # booked at 8:00, for later
    wait_until(env, START - timedelta(minutes=3))
    assert env.now == START - timedelta(minutes=2)  # the jump, then its own minute
    answer = env.call("attend_meeting", {"room_name": "Room_06", "start": at(START),
                                         "end": at(START + timedelta(hours=1))})
    assert answer["joined"] == "2025-10-01T12:58" and answer["notes"] == "Budgets are due on Friday."
    assert answer["now"] == "2025-10-01T14:01" and env.now == datetime(2025, 10, 1, 14, 1)
    assert [(a.meeting, a.joined) for a in env.outcome().attended] == [("Budget review", START - timedelta(minutes=2))]
    # A booked meeting has no notes; joining after a meeting ended leaves the clock where it is.
    before = env.now
    late = env.call("attend_meeting", {"room_name": "Room_02", "start": mine["start"], "end": mine["end"]})
    assert "notes" not in late and env.now == before + timedelta(minutes=1)


def test_a_slot_already_past_is_refused_and_a_booking_records_when_it_was_made(day: World) -> None:
    env = env_of(day)
    wait_until(env, datetime(2025, 10, 1, 10, 0))
    slot = {"attendees": list(TEAM), "room_name": "Room_02"}
    past = env.call("book_meeting", {**slot, "start": "10:00", "end": "11:00"})
    assert past["error"] == "tool_error" and "2025-10-01T10:00 has already passed (it is 2025-10-01T10:01)" in \
        past["message"]
    made_at = env.now
    booked = env.call("book_meeting", {**slot, "start": "10:30", "end": "11:00"})  # HH:MM: on the day's date
    assert (booked["start"], booked["end"], booked["now"]) == ("2025-10-01T10:30", "2025-10-01T11:00",
                                                                "2025-10-01T10:11")
    [meeting] = env.outcome().booked
    assert meeting.booked_at == made_at == datetime(2025, 10, 1, 10, 6) and meeting.attendees == TEAM
    assert env.call("get_available_rooms", {"start": "10:45", "end": "11:30"})["available"] == [
        f"Room_{n:02d}" for n in range(1, 11) if n != 2]


@pytest.mark.parametrize(("tool", "arguments", "words"), [
    ("get_available_rooms", {"start": "tomorrow at ten", "end": "2025-10-01T11:00:00"},
     "start must be a time such as 2025-10-01T13:00:00 or 13:00"),
    ("get_available_rooms", {"start": "2025-10-01T10:00:00", "end": "2025-13-01T11:00:00"},
     "end must be a time such as"),
    ("book_meeting", {"attendees": [], "room_name": "Room_01", "start": "2025-10-01T10:00:00+02:00",
                      "end": "2025-10-01T11:00:00+02:00"}, "without a time zone"),
    ("book_meeting", {"attendees": ["x"] * 501, "room_name": "Room_01", "start": "2025-10-01T10:00:00",
                      "end": "2025-10-01T11:00:00"}, "at most 500"),
    ("book_meeting", {"attendees": ["x" * 10_000], "room_name": "Room_01", "start": "2025-10-01T10:00:00",
                      "end": "2025-10-01T11:00:00"}, "at most 500"),
    ("book_meeting", {"attendees": [], "room_name": "R" * 10_000, "start": "2025-10-01T10:00:00",
                      "end": "2025-10-01T11:00:00"}, "no room"),
    ("attend_meeting", {"room_name": "Room_01", "start": "2025-10-01T10:00:00", "end": "2025-10-01T11:00:00"},
     "no meeting"),
    ("attend_meeting", {"room_name": "Room_01", "start": "\x00" * 100_000, "end": "2025-10-01T11:00:00"},
     "start must be"),
    ("cancel_meeting", {"room_name": "Room_01", "start": "2025-10-01T10:00:00", "end": "2025-10-01T11:00:00"},
     "you booked no meeting"),
    ("jump_time", {"minutes": 10**30}, "minutes must be from 1"),
    ("jump_time", {"minutes": -60}, "minutes must be from 1"),
    ("jump_time", {"minutes": 0}, "minutes must be from 1"),
])
def test_hostile_calendar_calls_are_tool_errors(day: World, tool: str, arguments: dict[str, Any],
                                                words: str) -> None:
    env = env_of(day)
    answer = env.call(tool, arguments)
    assert answer["error"] == "tool_error" and words in answer["message"], answer
    assert len(answer["message"]) <= 2100
    # A failed call costs its minutes, as in the reference.
    assert env.now == day.start + timedelta(minutes=TOOLSET.minutes.get(tool, TOOLSET.default))
    assert env.call("jump_time", {"minutes": "60"})["error"] == "invalid_arguments"  # costs nothing


def test_the_clock_stops_at_the_year_9999_with_an_error(day: World) -> None:
    env = env_of(day)
    last = datetime(9999, 12, 31, 16, 0)
    book(env, [], start=last)
    env.call("attend_meeting", {"room_name": "Room_02", "start": at(last), "end": at(last + timedelta(hours=1))})
    answer = env.call("jump_time", {"minutes": 1440})
    assert answer["error"] == "tool_error" and "9999" in answer["message"]


# -- the families' scores for plays of the calendar -------------------------------------------------------------

def company_day(root: Path) -> World:
    day = make_day(root)
    day.company = make_company(random.Random(7))
    return day


def play_book(day: World, *, invite: str = "attending", room: str = "Room_02", join_at: datetime | None = START,
              cancel: bool = False) -> tuple[DayTask, Score]:
    """Meeting Book played: rooms looked up, the booking made (inviting the task's ``invite`` list), maybe
    cancelled, and a join at ``join_at`` in ``room`` (None: never)."""
    task = meeting_book.FAMILY.generate(day, **BOOK)
    env = env_of(day, [task])
    slot = {"start": task.check["start"], "end": task.check["end"]}
    assert "Room_02" in env.call("get_available_rooms", slot)["available"]
    assert "booked" in env.call("book_meeting", {**slot, "room_name": "Room_02", "attendees": task.check[invite]})
    if cancel:
        assert "cancelled" in env.call("cancel_meeting", {**slot, "room_name": "Room_02"})
    if join_at is not None:
        wait_until(env, join_at)
        env.call("attend_meeting", {**slot, "room_name": room})
    return task, meeting_book.FAMILY.evaluate(task, env.outcome())


def test_a_right_meeting_book_play_earns_four_of_four(tmp_path: Path) -> None:
    task, score = play_book(company_day(tmp_path / "day"), join_at=START + timedelta(minutes=3))
    assert (score.points, score.full, score.notes) == (4.0, 4.0, ())
    assert "Manager" in task.description


@pytest.mark.parametrize(("play", "points", "missed"), [
    ({"join_at": START + timedelta(minutes=5)}, 3.0, "did not join the meeting on time"),  # joined at 13:06
    ({"room": "Room_03"}, 3.0, "did not join the meeting on time"),  # no meeting there: no join
    ({"join_at": None}, 3.0, "did not join the meeting on time"),
    ({"invite": "busy"}, 2.0, "Someone who cannot come"),
    ({"cancel": True}, 0.0, "No meeting was booked"),
])
def test_meeting_book_plays_that_miss_a_checkpoint_lose_its_point(tmp_path: Path, play: dict[str, Any],
                                                                 points: float, missed: str) -> None:
    _, score = play_book(company_day(tmp_path / "day"), **play)
    assert score.points == points and any(missed in note for note in score.notes), score


def play_attend(day: World, task_type: str, *, room: str = "Room_06",
                join_at: datetime = datetime(2025, 10, 1, 9, 30), write: bool = True) -> Score:
    """Meeting Attend played: a join at ``join_at`` in ``room``, then the summary the notes ask for written."""
    arguments = {"meeting_start_time": "2025-10-01T09:30:00", "task_type": task_type, "task_level": 2}
    task = meeting_attend.FAMILY.generate(day, **arguments)
    env = env_of(day, [task])
    wait_until(env, join_at)
    answer = env.call("attend_meeting", {"room_name": room, "start": "2025-10-01T09:30:00",
                                         "end": "2025-10-01T10:30:00"})
    if room == meeting_attend.ROOM:
        assert answer.get("notes", "") == day.meetings[-1].notes
    if write and task_type != "none":
        (day.workspace / meeting_attend.OUTPUT).write_text(json.dumps(summary_from_notes(day, task_type)))
    return meeting_attend.FAMILY.evaluate(task, env.outcome())


@pytest.mark.parametrize(("task_type", "play", "points", "full"), [
    ("check_sum", {}, 4.0, 4.0),
    ("write", {"join_at": datetime(2025, 10, 1, 9, 0)}, 4.0, 4.0),  # early counts
    ("none", {}, 1.0, 1.0),
    ("none", {"join_at": datetime(2025, 10, 1, 9, 35)}, 0.0, 1.0),  # joined at 9:36
    ("none", {"room": "Room_05"}, 0.0, 1.0),
    ("sum", {"join_at": datetime(2025, 10, 1, 9, 40)}, 3.0, 4.0),
    ("check", {"write": False}, 1.0, 4.0),
])
def test_meeting_attend_plays_score_as_the_reference(tmp_path: Path, task_type: str, play: dict[str, Any],
                                                     points: float, full: float) -> None:
    score = play_attend(meeting_day(tmp_path / "day"), task_type, **play)
    assert (score.points, score.full) == (points, full), score
