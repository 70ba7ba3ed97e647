"""Our days in the day engine: files stay inside their folders, the clock only moves forward and the day ends, a
rejected call costs nothing, clues need the right question, meetings hand out tasks, work after a deadline does not
count, the calculator is arithmetic only, bookings respect rooms and time, and guidance shows hints by tier."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from occubench.workplace.generate import generate_day
from occubench.workplace.model import Day, at, minutes
from occubench.workplace.schedule import TOOLSET, reference_schedule
from occubench.workplace.templates import FAMILIES
from occubench.workplace.templates.base import Names
from tests.workplace.families import played, scores


def day_with(family: str, seed: int = 0) -> Day:
    for index in range(1, 200):
        day = generate_day(seed, index)
        if any(t.family == family for t in day.tasks):
            return day
    raise AssertionError(f"no day with {family}")


def test_files_cannot_leave_their_roots(tmp_path: Path) -> None:
    env = played(generate_day(1, 1), tmp_path / "day")
    (tmp_path / "secrets.json").write_text("{}")
    for path in ("../secrets.json", "a/../../b", ".."):
        for tool, arguments in (("read_file", {"file_path": path}),
                                ("write_file", {"file_path": path, "content": "x"}),
                                ("download_file", {"file_path": path, "target_path": "x"}),
                                ("open_folder", {"folder_path": path})):
            observation = env.call(tool, arguments)
            assert observation["error"] == "tool_error" and "leaves its folder" in observation["message"], (tool, path)
    assert not any((tmp_path / "day" / "workspace").iterdir()) and env.writes == []
    assert "no file" in env.call("read_file", {"file_path": "/etc/passwd"})["message"]  # read inside its root


def test_the_clock_only_moves_forward_and_the_day_ends(tmp_path: Path) -> None:
    env = played(generate_day(1, 1), tmp_path / "day")
    times = []
    for _ in range(5):
        times.append(env.call("open_folder", {"folder_path": "./"})["now"])
    assert times == sorted(times) and times[0] == (at("09:00").replace(minute=1)).isoformat(timespec="minutes")
    env.now = at("18:00")
    assert env.call("list_tasks", {}) == {"error": "tool_error", "message": "the working day ended at 18:00"}


def test_rejected_calls_cost_no_time_and_a_finished_day_stays_finished(tmp_path: Path) -> None:
    env = played(generate_day(1, 1), tmp_path / "day")
    start = env.now
    assert env.call("read_file", {"file_path": 123})["error"] == "invalid_arguments"
    assert env.call("read_file", {})["error"] == "invalid_arguments"
    assert env.call("teleport", {})["error"] == "unknown_tool"
    assert env.now == start and env.messages == []
    assert "no file" in env.call("read_file", {"file_path": "nope.txt"})["message"]
    assert env.now == start.replace(minute=3)  # a domain failure is an action: it takes its time
    env.call("done", {"notes": "ask first"})
    assert env.call("list_tasks", {}) == {"error": "tool_error", "message": "the day is over: you called done"}
    assert env.info()["day_notes"] == "ask first"


def test_our_days_offer_our_tools_and_say_whether_they_write(tmp_path: Path) -> None:
    tools = played(generate_day(1, 1), tmp_path / "day").tools()  # with an image to read; no shell without a sandbox
    assert {t.name for t in tools} == TOOLSET.tools | {"read_image"}
    assert {t.name for t in tools if t.writes} == {"send_message", "download_file", "write_file", "book_meeting",
                                                   "cancel_meeting", "attend_meeting", "jump_time", "done"}


def test_clues_come_only_with_the_right_question(tmp_path: Path) -> None:
    day = day_with("transaction_audit")
    task = next(t for t in day.tasks if t.family == "transaction_audit")
    finance = next(c for c in day.colleagues if c.clues and c.clues[0].id.startswith(task.id))
    env = played(day, tmp_path / "day")
    vague = env.call("send_message", {"to": finance.name, "text": "Hello, can you help me?"})
    assert finance.clues[0].text not in vague["reply"]
    asked = env.call("send_message", {"to": finance.name, "text": "What is the approval threshold?"})
    assert asked["reply"] == finance.clues[0].text
    assert "nobody is called" in env.call("send_message", {"to": "Nobody Here", "text": "hi"})["message"]


def test_meetings_hand_out_tasks_and_lateness_counts(tmp_path: Path) -> None:
    day = day_with("meeting_followup")
    meeting = day.meetings[0]
    follow_up = next(t for t in day.tasks if t.appears in (f"meeting:{meeting.id}", f"meeting:{meeting.title}"))
    attend = {"room_name": meeting.room, "start": meeting.start, "end": meeting.end}
    env = played(day, tmp_path / "on time")
    assert follow_up.id not in {t["id"] for t in env.call("list_tasks", {})["tasks"]}
    attended = env.call("attend_meeting", attend)
    assert attended["notes"] and env.now == at(meeting.end)
    assert follow_up.id in attended["new_tasks"]
    first = next(t for t in day.tasks if t.family == "meeting_followup" and t.id != follow_up.id)
    assert scores(env)[day.tasks.index(first)].points == 1
    late = played(day, tmp_path / "late")
    late.now = at(meeting.start).replace(minute=at(meeting.start).minute + 10)
    late.call("attend_meeting", attend)
    assert scores(late)[day.tasks.index(first)].points == 0


def test_work_done_after_the_deadline_does_not_count(tmp_path: Path) -> None:
    day = day_with("transaction_audit")
    env = played(day, tmp_path / "day")
    audit = next(t for t in day.tasks if t.family == "transaction_audit")
    env.now = at(audit.deadline).replace(minute=at(audit.deadline).minute + 1)
    for step in audit.reference:
        env.call(step["tool"], step["arguments"])
    score = scores(env)[day.tasks.index(audit)]
    assert score.points == 0 and all("(done after the deadline)" in note for note in score.notes)


def test_calculator_is_arithmetic_only(tmp_path: Path) -> None:
    env = played(generate_day(1, 1), tmp_path / "day")
    assert env.call("calculator", {"expression": "(1200 - 150) * 0.2"})["result"] == 210
    assert env.call("calculator", {"expression": "2 ** 10 % 7 - 7 // 2"})["result"] == 2 ** 10 % 7 - 7 // 2
    assert env.call("calculator", {"expression": "10 ** 100"})["result"] == 10 ** 100
    for bad in ("__import__('os')", "open('x')", "1 < 2", "~1", "1 << 2", "'a' * 3", "True + 1", "1j", "", "1 +",
                "\x00", "1" * 5000, "+".join(["1"] * 150), "-" * 400 + "1", "(-8) ** 0.5"):
        observation = env.call("calculator", {"expression": bad})
        assert observation["error"] == "tool_error", (bad[:50], observation)


@pytest.mark.parametrize("expression", ["(10**100)**50", "(((10**100)**100)**100)**100", "9**9**9**9", "1e308*10",
                                        "2 ** 10000", "10**100 * 10**100", "((10**50)**2)**2", "0.1 ** -400",
                                        "1e300", "9" * 101])
def test_calculator_refuses_numbers_too_large_before_computing_them(expression: str, tmp_path: Path) -> None:
    observation = played(generate_day(1, 1), tmp_path / "day").call("calculator", {"expression": expression})
    assert observation["error"] == "tool_error" and "too large" in observation["message"]


@pytest.mark.parametrize("expression", ["1/0", "5 // 0", "5 % 0", "0 ** -1", "1.5 / 0.0"])
def test_calculator_division_by_zero(expression: str, tmp_path: Path) -> None:
    observation = played(generate_day(1, 1), tmp_path / "day").call("calculator", {"expression": expression})
    assert observation == {"error": "tool_error", "message": "division by zero"}


def test_bookings_respect_rooms_and_time(tmp_path: Path) -> None:
    day = day_with("meeting_followup")
    env = played(day, tmp_path / "day")
    taken = day.busy[0]
    attendee = day.colleagues[0].name
    clash = env.call("book_meeting", {"room_name": taken["room"], "start": taken["start"], "end": taken["end"],
                                      "attendees": [attendee]})
    assert clash["error"] == "tool_error" and "is taken" in clash["message"]
    assert "already passed" in env.call("book_meeting", {"room_name": "Aurora", "start": "08:00", "end": "08:30",
                                                         "attendees": []})["message"]
    for start, end in (("9", "10:00"), ("25:00", "26:00"), ("12:60", "13:00"), ("1_2:00", "13:00"),
                       ("14:00", "13:00"), ("08:00", "09:00"), ("17:30", "18:30")):
        bad = env.call("get_available_rooms", {"start": start, "end": end})
        assert bad["error"] == "tool_error" and any(
            words in bad["message"] for words in ("must be a time", "must end after", "between 09:00 and 18:00"))
    booked = env.call("book_meeting", {"room_name": "Aurora", "start": "17:00", "end": "17:30",
                                       "attendees": [attendee]})
    assert booked["room"] == "Aurora" and booked["attendees"] == [attendee]
    assert env.call("cancel_meeting", {"room_name": "Aurora", "start": "17:00", "end": "17:30"})["cancelled"]
    assert env.calendar.booked() == []


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_alone_is_solved_by_its_reference_and_not_by_guessing(family: str) -> None:
    for seed in range(5):
        piece = FAMILIES[family].build(random.Random(seed), Names(random.Random(seed)), "t1")
        assert piece.tasks and all(t.checkpoints and t.reference for t in piece.tasks)
        assert all(not any(str(v) in c.feedback for c in t.checkpoints for v in c.check.get("values", []))
                   for t in piece.tasks), "feedback must not leak the answer"


def test_reference_schedules_meet_their_deadlines() -> None:
    for index in range(1, 30):
        day = generate_day(5, index)
        _, done = reference_schedule(day)
        for task in day.tasks:
            assert done[task.id] <= minutes(task.deadline), (day.id, task.id)


def test_values_match_as_whole_tokens() -> None:
    from occubench.workplace.scoring import _has
    assert _has("SKU-7128,101\nSKU-1,80", ["SKU-7128,101", "sku-1,80"])
    assert not _has("SKU-1,80", ["SKU-1,8"]) and not _has("14 order lines", ["4 order lines"])
    assert _has("total expected value 1,709k EUR", ["1709"]) and not _has("1709.5", ["1709"])
    assert _has("Booked Aurora.", ["aurora"]) and not _has("Auroras", ["aurora"])


def test_guidance_shows_each_task_s_hints_up_to_the_chosen_tier(tmp_path: Path) -> None:
    day = generate_day(0, 1)
    for number, task in enumerate(day.tasks):
        task.hints = [f"look {number}", f"ask {number}", f"plan {number}"]
    for tier in range(4):
        env = played(day, tmp_path / str(tier), guidance=tier)
        listed = env.call("list_tasks", {})["tasks"]
        assert listed, "a day starts with tasks in the list"
        for shown in listed:
            number = next(i for i, task in enumerate(day.tasks) if task.id == shown["id"])
            expected = " ".join([f"look {number}", f"ask {number}", f"plan {number}"][:tier])
            assert shown.get("guidance", "") == expected
        assert env.info().get("guidance", 0) == tier
