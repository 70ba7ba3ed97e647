"""Our days' tools and the minutes each takes, and the reference schedule: a day's reference calls in a feasible
order, from which the generator sets deadlines and validation checks that every generated day is solvable."""

from __future__ import annotations

from typing import Any

from occubench.workplace.model import Day, Meeting, minutes
from occubench.workplace.world import Toolset

#: The tools of every day of ours (a task that needs the shell or images brings those), and their minutes.
TOOLSET = Toolset(frozenset({"list_tasks", "list_users", "send_message", "list_chat_groups", "open_folder",
                             "read_file", "download_file", "write_file", "list_meetings", "get_available_rooms",
                             "book_meeting", "cancel_meeting", "attend_meeting", "jump_time", "calculator", "done"}),
                  {"read_file": 3, "write_file": 4, "send_message": 5, "book_meeting": 3, "attend_meeting": 0,
                   "execute_command": 2, "read_image": 2, "done": 0})


def minutes_of(tool: str) -> int:
    return TOOLSET.minutes.get(tool, TOOLSET.default)


def reference_schedule(day: Day) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The reference calls for the whole day in a feasible order, and when each task's work is done.

    Tasks run in order as they become visible; a meeting is attended as soon as the next call would make the
    reference late for it (a meeting the reference books, once it is booked); tasks handed out in a meeting, or
    gated on another task, join the queue when they appear.
    """
    now = minutes(day.start) + minutes_of("list_tasks")
    calls: list[dict[str, Any]] = [{"tool": "list_tasks", "arguments": {}}]
    done: dict[str, int] = {}
    attended: set[str] = set()
    meetings = sorted(day.meetings, key=lambda m: minutes(m.start))
    queue = [task for task in day.tasks if task.appears == "start"]
    waiting = [task for task in day.tasks if task.appears != "start"]

    booked: dict[str, dict[str, Any]] = {}  # the reference's own attend steps of the meetings it books, by id

    def attend(meeting_id: str) -> None:
        nonlocal now
        meeting = next(m for m in meetings if m.id == meeting_id)
        calls.append(booked.get(meeting_id) or {
            "tool": "attend_meeting", "arguments": {"room_name": meeting.room, "start": meeting.start,
                                                    "end": meeting.end}})
        now = max(now, minutes(meeting.end))
        attended.add(meeting_id)
        release(f"meeting:{meeting_id}", f"meeting:{meeting.title}")

    def release(*triggers: str) -> None:
        for task in [t for t in waiting if t.appears in triggers]:
            waiting.remove(task)
            queue.append(task)

    while queue or len(attended) < len(meetings):
        if not queue:
            attend(next(m.id for m in meetings if m.id not in attended))
            continue
        task = queue.pop(0)
        for step in task.reference:
            if step["tool"] == "attend_meeting":  # meetings are attended by the clock, below
                where = step["arguments"]
                if not any((m.room, m.start, m.end) == (where["room_name"], where["start"], where["end"])
                           for m in meetings):  # one the task has just booked
                    booked[f"{task.id}:booked"] = step
                    meetings.append(Meeting(f"{task.id}:booked", "", where["start"], where["end"], where["room_name"]))
                    meetings.sort(key=lambda m: minutes(m.start))
                continue
            upcoming = next((m for m in meetings if m.id not in attended), None)
            if upcoming and now + minutes_of(step["tool"]) > minutes(upcoming.start):
                attend(upcoming.id)
            calls.append(step)
            now += minutes_of(step["tool"])
        done[task.id] = now
        release(f"task:{task.id}")
    for meeting in meetings:
        done.setdefault(next(t.id for t in day.tasks if any(
            s["tool"] == "attend_meeting" and s["arguments"]["start"] == meeting.start and
            s["arguments"]["room_name"] == meeting.room for s in t.reference)), minutes(meeting.end))
    calls.append({"tool": "done", "arguments": {}})
    return calls, done
