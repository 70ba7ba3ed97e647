"""The reference schedule: a day's reference calls in a feasible order, from which the generator sets deadlines and
validation checks that every generated day is solvable."""

from __future__ import annotations

from typing import Any

from occubench.workplace.environment import COSTS
from occubench.workplace.model import Day, minutes


def reference_schedule(day: Day) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The reference calls for the whole day in a feasible order, and when each task's work is done.

    Tasks run in order as they become visible; a meeting is attended as soon as the next call would make the
    reference late for it; tasks handed out in a meeting, or gated on another task, join the queue when they
    appear.
    """
    now = minutes(day.start) + COSTS["list_tasks"]
    calls: list[dict[str, Any]] = [{"tool": "list_tasks", "arguments": {}}]
    done: dict[str, int] = {}
    attended: set[str] = set()
    meetings = sorted(day.meetings, key=lambda m: minutes(m.start))
    queue = [task for task in day.tasks if task.appears == "start"]
    waiting = [task for task in day.tasks if task.appears != "start"]

    def attend(meeting_id: str) -> None:
        nonlocal now
        meeting = next(m for m in meetings if m.id == meeting_id)
        calls.append({"tool": "calendar_attend", "arguments": {"meeting_id": meeting_id}})
        now = max(now, minutes(meeting.end))
        attended.add(meeting_id)
        release(f"meeting:{meeting_id}")

    def release(trigger: str) -> None:
        for task in [t for t in waiting if t.appears == trigger]:
            waiting.remove(task)
            queue.append(task)

    while queue or len(attended) < len(meetings):
        if not queue:
            attend(next(m.id for m in meetings if m.id not in attended))
            continue
        task = queue.pop(0)
        for step in task.reference:
            if step["tool"] == "calendar_attend":
                continue  # meetings are attended by the clock, below
            upcoming = next((m for m in meetings if m.id not in attended), None)
            if upcoming and now + COSTS[step["tool"]] > minutes(upcoming.start):
                attend(upcoming.id)
            calls.append(step)
            now += COSTS[step["tool"]]
        done[task.id] = now
        release(f"task:{task.id}")
    for meeting in meetings:
        done.setdefault(next(t.id for t in day.tasks if any(s["tool"] == "calendar_attend" and
                                                          s["arguments"]["meeting_id"] == meeting.id
                                                          for s in t.reference)), minutes(meeting.end))
    calls.append({"tool": "finish_day", "arguments": {}})
    return calls, done
