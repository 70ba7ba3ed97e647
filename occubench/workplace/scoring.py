"""Checkpoints are data, checked against what the agent did and when: a checkpoint met after its task's deadline
does not count. A task's score is its passed weight over its total weight; a day's score is the mean over tasks."""

from __future__ import annotations

import functools
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


_DIGITS = frozenset("0123456789")
_NUMBER = _DIGITS | {"."}
_ALNUM = _DIGITS | frozenset("abcdefghijklmnopqrstuvwxyz")


def _whole(text: str, value: str) -> bool:
    """Whether ``value`` is in ``text`` as a whole token: "SKU-1,8" is not inside "SKU-1,80", nor "4" inside "14"; a
    number may carry a unit ("1709k") but not more digits.

    Every occurrence is looked at, each in constant time, with overlapping ones stepped through by the value's
    period, so the time is linear in both texts (a regular expression with lookarounds took their product)."""
    glued = _NUMBER if value[:1].isdigit() else _ALNUM  # what may not come just before the value
    ending = _DIGITS if value[-1:].isdigit() else _ALNUM  # nor just after it (nor, after a number, "." and a digit)
    period = _period(value)
    tail = value[len(value) - period:]
    at = text.find(value)
    while at >= 0:
        end = at + len(value)
        after = text[end:end + 2]
        decimals = ending is _DIGITS and after[:1] == "." and after[1:] in _DIGITS
        if (at == 0 or text[at - 1] not in glued) and after[:1] not in ending and not decimals:
            return True
        # When the text goes on in the value's period, the next occurrence is one period on; otherwise search again
        # (always for an empty value, which has no tail: it is at every position).
        at = at + period if tail and text.startswith(tail, end) else text.find(value, at + 1)
    return False


@functools.lru_cache(maxsize=64)
def _period(value: str) -> int:
    """The least p > 0 with ``value[i] == value[i + p]`` wherever both exist: its length less its longest border
    (the prefix that is also a suffix), from the Knuth-Morris-Pratt failure function."""
    borders = [0] * len(value)
    for i in range(1, len(value)):
        border = borders[i - 1]
        while border and value[i] != value[border]:
            border = borders[border - 1]
        borders[i] = border + (value[i] == value[border])
    return len(value) - borders[-1] if value else 1


def _has(text: str, values: list[str]) -> bool:
    flat = _flat(text)
    return all(_whole(flat, _flat(value)) for value in values)


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
