"""Checkpoints are data, checked against what the agent did and when: a checkpoint met after its task's deadline
does not count. A task's score is its passed weight over its total weight; a day's score is the mean over tasks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from occubench.workplace.model import Day, minutes


class Workday(Protocol):
    """What scoring reads of a day as played: the day, what the agent did and when, and the rooms it booked. The
    environment is one; scoring defines the shape so that the environment can score its own gated tasks."""

    day: Day
    events: list[dict[str, Any]]
    bookings: list[dict[str, Any]]


def _flat(text: str) -> str:
    # Numbers are compared without thousands separators; text case-insensitively.
    return re.sub(r"(?<=\d),(?=\d{3})", "", str(text)).lower()


def _token(value: str) -> str:
    """A pattern for ``value`` as a whole token: "SKU-1,8" is not inside "SKU-1,80", nor "4" inside "14"; a number
    may carry a unit ("1709k") but not more digits."""
    flat = _flat(value)
    before = r"(?<![0-9.])" if flat[:1].isdigit() else r"(?<![0-9a-z])"
    after = r"(?![0-9]|\.[0-9])" if flat[-1:].isdigit() else r"(?![0-9a-z])"
    return before + re.escape(flat) + after


def _has(text: str, values: list[str]) -> bool:
    flat = _flat(text)
    return all(re.search(_token(value), flat) for value in values)


def checkpoint_met(check: dict[str, Any], env: Workday, deadline: str) -> bool:
    """Whether ``check`` holds on what ``env`` recorded up to ``deadline``."""
    limit = minutes(deadline)
    events = [e for e in env.events if e["time"] <= limit]
    kind = check["kind"]
    if kind == "file":
        writes = [e for e in events if e["kind"] == "write" and e["path"] == check["path"]]
        return bool(writes) and _has(writes[-1]["content"], check.get("values", [])) and \
            not any(_has(writes[-1]["content"], [value]) for value in check.get("absent", []))
    if kind == "message":
        return any(e["kind"] == "message" and e["to"] == check["to"] and _has(e["text"], check.get("values", []))
                   for e in events)
    if kind == "booking":
        booked = {e["booking"] for e in events if e["kind"] == "book"}
        return any(b["id"] in booked and not b["cancelled"] and b["start"] == check["start"] and
                   b["end"] == check["end"] and set(check["attendees"]) <= set(b["attendees"]) and
                   env.day.rooms[b["room"]] >= check["min_capacity"] for b in env.bookings)
    if kind == "attended":
        return any(e["kind"] == "attend" and e["meeting"] == check["meeting"] and e["on_time"] for e in events)
    raise ValueError(f"unknown checkpoint kind {kind!r}")


@dataclass
class TaskScore:
    task_id: str
    family: str
    category: str
    difficulty: str
    score: float
    success: bool
    checkpoints: list[dict[str, Any]]


def score_day(day: Day, env: Workday) -> list[TaskScore]:
    scores = []
    for task in day.tasks:
        results: list[dict[str, Any]] = [
            {"name": c.name, "weight": c.weight, "passed": checkpoint_met(c.check, env, task.deadline), "late": False,
             "feedback": c.feedback} for c in task.checkpoints]
        for result, checkpoint in zip(results, task.checkpoints):
            # Met by the end of the day but not by the deadline: say so, it is what the feedback is for.
            result["late"] = not result["passed"] and checkpoint_met(checkpoint.check, env, day.end)
        total = sum(c.weight for c in task.checkpoints)
        passed = sum(r["weight"] for r in results if r["passed"])
        scores.append(TaskScore(task.id, task.family, task.category, task.difficulty, passed / total, passed == total,
                                results))
    return scores
