"""The workplace environment: roots that cannot be left, a clock that only moves forward, clues released on the
right question, meetings that must be attended on time, checkpoints that do not count after the deadline."""

from __future__ import annotations

import random

import pytest

from occubench.workplace.environment import COSTS, WorkplaceEnvironment
from occubench.workplace.generate import generate_day, reference_schedule
from occubench.workplace.model import minutes
from occubench.workplace.scoring import checkpoint_met, score_day
from occubench.workplace.templates import FAMILIES
from occubench.workplace.templates.base import Names


def day_with(family: str, seed: int = 0):
    for index in range(1, 200):
        day = generate_day(seed, index)
        if any(t.family == family for t in day.tasks):
            return day
    raise AssertionError(f"no day with {family}")


def test_files_cannot_leave_their_roots() -> None:
    env = WorkplaceEnvironment(generate_day(1, 1))
    for path in ("../secrets.json", "/etc/passwd", "a/../../b", ".."):
        for tool, arguments in (("drive_read", {"path": path}), ("workspace_write", {"path": path, "content": "x"}),
                                ("workspace_read", {"path": path}), ("drive_copy", {"path": path})):
            assert "outside your files" in env.call(tool, arguments)["error"], (tool, path)
    assert env.workspace == {}


def test_the_clock_only_moves_forward_and_the_day_ends() -> None:
    env = WorkplaceEnvironment(generate_day(1, 1))
    times = []
    for _ in range(5):
        env.call("drive_list", {})
        times.append(env.now)
    assert times == sorted(times) and times[0] == minutes("09:00") + COSTS["drive_list"]
    env.now = minutes("18:00")
    assert env.call("clock_now", {}) == {"error": "the working day ended at 18:00"}


def test_clues_come_only_with_the_right_question() -> None:
    day = day_with("transaction_audit")
    task = next(t for t in day.tasks if t.family == "transaction_audit")
    finance = next(c for c in day.colleagues if c.clues and c.clues[0].id.startswith(task.id))
    env = WorkplaceEnvironment(day)
    vague = env.call("send_message", {"to": finance.name, "text": "Hello, can you help me?"})
    assert finance.clues[0].text not in vague["replies"][0]["text"]
    asked = env.call("send_message", {"to": finance.name, "text": "What is the approval threshold?"})
    assert asked["replies"][0]["text"] == finance.clues[0].text
    assert "nobody called" in env.call("send_message", {"to": "Nobody Here", "text": "hi"})["error"]


def test_meetings_hand_out_tasks_and_lateness_counts() -> None:
    day = day_with("meeting_followup")
    meeting = day.meetings[0]
    follow_up = next(t for t in day.tasks if t.appears == f"meeting:{meeting.id}")
    env = WorkplaceEnvironment(day)
    assert follow_up.id not in {t["id"] for t in env.call("list_tasks", {})["tasks"]}
    attended = env.call("calendar_attend", {"meeting_id": meeting.id})
    assert attended["on_time"] and attended["notes"] and env.now == minutes(meeting.end)
    assert follow_up.id in attended["new_tasks"]
    late = WorkplaceEnvironment(day)
    late.now = minutes(meeting.start) + 10
    assert late.call("calendar_attend", {"meeting_id": meeting.id})["on_time"] is False
    assert not checkpoint_met({"kind": "attended", "meeting": meeting.id}, late, day.end)


def test_work_done_after_the_deadline_does_not_count() -> None:
    day = day_with("transaction_audit")
    env = WorkplaceEnvironment(day)
    audit = next(t for t in day.tasks if t.family == "transaction_audit")
    env.now = minutes(audit.deadline) + 1
    for step in audit.reference:
        env.call(step["tool"], step["arguments"])
    [score] = [s for s in score_day(day, env) if s.task_id == audit.id]
    assert score.score == 0 and all(c["late"] for c in score.checkpoints)


def test_calculator_is_arithmetic_only() -> None:
    env = WorkplaceEnvironment(generate_day(1, 1))
    assert env.call("calculator", {"expression": "(1200 - 150) * 0.2"})["result"] == pytest.approx(210)
    for bad in ("__import__('os')", "open('x')", "2 ** 10000", "1/0"):
        assert "error" in env.call("calculator", {"expression": bad})


def test_bookings_respect_rooms_and_time() -> None:
    day = day_with("meeting_followup")
    env = WorkplaceEnvironment(day)
    taken = day.busy[0]
    attendee = day.colleagues[0].name
    clash = env.call("calendar_book", {"room": taken["room"], "start": taken["start"], "end": taken["end"],
                                       "title": "x", "attendees": [attendee]})
    assert "not free" in clash["error"]
    assert "already passed" in env.call("calendar_book", {"room": "Aurora", "start": "08:00", "end": "08:30",
                                                          "title": "x", "attendees": []})["error"]
    booked = env.call("calendar_book", {"room": "Aurora", "start": "17:00", "end": "17:30", "title": "x",
                                        "attendees": [attendee]})
    assert booked["id"] == "B1"
    assert env.call("calendar_cancel", {"booking_id": "B1"}) == {"cancelled": "B1"}


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
