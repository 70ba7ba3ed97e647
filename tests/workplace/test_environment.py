"""The workplace environment: roots that cannot be left, a clock that only moves forward (and not for rejected
calls), clues released on the right question, meetings that must be attended on time, checkpoints that do not count
after the deadline, a calculator whose numbers stay bounded."""

from __future__ import annotations

import random

import pytest

from occubench.workplace.environment import COSTS, WRITES, WorkplaceEnvironment
from occubench.workplace.generate import generate_day
from occubench.workplace.model import minutes
from occubench.workplace.schedule import reference_schedule
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
            observation = env.call(tool, arguments)
            assert observation["error"] == "tool_error" and "outside your files" in observation["message"], (tool, path)
    assert env.workspace == {}


def test_the_clock_only_moves_forward_and_the_day_ends() -> None:
    env = WorkplaceEnvironment(generate_day(1, 1))
    times = []
    for _ in range(5):
        env.call("drive_list", {})
        times.append(env.now)
    assert times == sorted(times) and times[0] == minutes("09:00") + COSTS["drive_list"]
    env.now = minutes("18:00")
    assert env.call("clock_now", {}) == {"error": "tool_error", "message": "the working day ended at 18:00"}


def test_rejected_calls_cost_no_time_and_a_finished_day_stays_finished() -> None:
    env = WorkplaceEnvironment(generate_day(1, 1))
    start = env.now
    assert env.call("drive_read", {"path": 123})["error"] == "invalid_arguments"
    assert env.call("drive_read", {})["error"] == "invalid_arguments"
    assert env.call("teleport", {})["error"] == "unknown_tool"
    assert env.now == start and env.events == []
    assert "no file" in env.call("drive_read", {"path": "nope.txt"})["message"]
    assert env.now == start + COSTS["drive_read"]  # a domain failure is an action: it takes its time
    env.call("finish_day", {"notes": "ask first"})
    assert env.call("clock_now", {}) == {"error": "tool_error", "message": "you have already finished your working day"}


def test_tools_say_whether_they_write() -> None:
    tools = WorkplaceEnvironment(generate_day(1, 1)).tools()
    assert [t.name for t in tools] == list(WorkplaceEnvironment.TOOLS)
    assert {t.name for t in tools if t.writes} == WRITES == {
        "workspace_write", "drive_copy", "send_message", "calendar_book", "calendar_cancel", "calendar_attend",
        "finish_day"}
    assert all(t.writes is False for t in tools if t.name not in WRITES)


def test_clues_come_only_with_the_right_question() -> None:
    day = day_with("transaction_audit")
    task = next(t for t in day.tasks if t.family == "transaction_audit")
    finance = next(c for c in day.colleagues if c.clues and c.clues[0].id.startswith(task.id))
    env = WorkplaceEnvironment(day)
    vague = env.call("send_message", {"to": finance.name, "text": "Hello, can you help me?"})
    assert finance.clues[0].text not in vague["replies"][0]["text"]
    asked = env.call("send_message", {"to": finance.name, "text": "What is the approval threshold?"})
    assert asked["replies"][0]["text"] == finance.clues[0].text
    assert "nobody called" in env.call("send_message", {"to": "Nobody Here", "text": "hi"})["message"]


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
    assert env.call("calculator", {"expression": "2 ** 10 % 7 - 7 // 2"})["result"] == 2 ** 10 % 7 - 7 // 2
    assert env.call("calculator", {"expression": "10 ** 100"})["result"] == 10 ** 100
    for bad in ("__import__('os')", "open('x')", "1 < 2", "~1", "1 << 2", "'a' * 3", "True + 1", "1j", "", "1 +",
                "\x00", "1" * 5000, "+".join(["1"] * 150), "-" * 400 + "1", "(-8) ** 0.5"):
        observation = env.call("calculator", {"expression": bad})
        assert observation["error"] == "tool_error", (bad[:50], observation)


@pytest.mark.parametrize("expression", ["(10**100)**50", "(((10**100)**100)**100)**100", "9**9**9**9", "1e308*10",
                                        "2 ** 10000", "10**100 * 10**100", "((10**50)**2)**2", "0.1 ** -400",
                                        "1e300", "9" * 101])
def test_calculator_refuses_numbers_too_large_before_computing_them(expression: str) -> None:
    observation = WorkplaceEnvironment(generate_day(1, 1)).call("calculator", {"expression": expression})
    assert observation["error"] == "tool_error" and "too large" in observation["message"]


@pytest.mark.parametrize("expression", ["1/0", "5 // 0", "5 % 0", "0 ** -1", "1.5 / 0.0"])
def test_calculator_division_by_zero(expression: str) -> None:
    observation = WorkplaceEnvironment(generate_day(1, 1)).call("calculator", {"expression": expression})
    assert observation == {"error": "tool_error", "message": "division by zero"}


def test_bookings_respect_rooms_and_time() -> None:
    day = day_with("meeting_followup")
    env = WorkplaceEnvironment(day)
    taken = day.busy[0]
    attendee = day.colleagues[0].name
    clash = env.call("calendar_book", {"room": taken["room"], "start": taken["start"], "end": taken["end"],
                                       "title": "x", "attendees": [attendee]})
    assert clash["error"] == "tool_error" and "not free" in clash["message"]
    assert "already passed" in env.call("calendar_book", {"room": "Aurora", "start": "08:00", "end": "08:30",
                                                          "title": "x", "attendees": []})["message"]
    for start, end in (("9", "10:00"), ("25:00", "26:00"), ("12:60", "13:00"), ("1_2:00", "13:00"), ("14:00", "13:00")):
        bad = env.call("calendar_free_rooms", {"start": start, "end": end})
        assert bad["error"] == "tool_error" and ("HH:MM" in bad["message"] or "after the start" in bad["message"])
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


def test_guidance_shows_each_task_s_hints_up_to_the_chosen_tier() -> None:
    day = generate_day(0, 1)
    for number, task in enumerate(day.tasks):
        task.hints = [f"look {number}", f"ask {number}", f"plan {number}"]
    for tier in range(4):
        env = WorkplaceEnvironment(day, guidance=tier)
        listed = env.call("list_tasks", {})["tasks"]
        assert listed, "a day starts with tasks in the list"
        for shown in listed:
            number = next(i for i, task in enumerate(day.tasks) if task.id == shown["id"])
            expected = " ".join([f"look {number}", f"ask {number}", f"plan {number}"][:tier])
            assert shown.get("guidance", "") == expected
        assert env.info().get("guidance", 0) == tier
