"""Our families' checkpoints are data, checked against what the agent did and when: a checkpoint met after its
task's deadline does not count. A task's points are its passed checkpoints' weight, of their total weight; the
notes are the missed checkpoints' feedback."""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import Any

from occubench.workplace.calendar import end_of, on_time
from occubench.workplace.world import DayTask, Outcome, Score


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


def checkpoint_met(check: dict[str, Any], outcome: Outcome, deadline: datetime) -> bool:
    """Whether ``check`` holds on what ``outcome`` recorded up to ``deadline``."""
    kind = check["kind"]
    if kind == "file":
        writes = [w for w in outcome.writes if w.at <= deadline and w.path == check["path"]]
        return bool(writes) and _has(writes[-1].content, check.get("values", [])) and \
            not any(_has(writes[-1].content, [value]) for value in check.get("absent", []))
    if kind == "message":
        return any(m.recipient == check["to"] and m.at <= deadline and _has(m.text, check.get("values", []))
                   for m in outcome.messages + outcome.group_messages)
    if kind in ("booking", "hosted"):  # hosted: booked, and the agent there on time (by the deadline)
        return any(m.booked_at is not None and m.booked_at <= deadline and f"{m.start:%H:%M}" == check["start"] and
                   f"{end_of(m):%H:%M}" == check["end"] and set(check["attendees"]) <= set(m.attendees) and
                   outcome.rooms.get(m.room, 0) >= check["min_capacity"] and
                   (kind == "booking" or on_time(outcome.attended, m.title, m.start, by=deadline))
                   for m in outcome.booked)
    if kind == "attended":
        start = datetime.combine(deadline.date(), datetime.strptime(check["start"], "%H:%M").time())
        return on_time(outcome.attended, check["meeting"], start, by=deadline)
    raise ValueError(f"unknown checkpoint kind {kind!r}")


def evaluate(task: DayTask, outcome: Outcome) -> Score:
    """The task's score; each missed checkpoint's feedback is a note, saying when it was met only after the
    deadline (by the day's end, ``check["day_end"]``), which is what the feedback is for."""
    end = datetime.fromisoformat(task.check["day_end"])
    points, notes = 0, []
    for checkpoint in task.check["checkpoints"]:
        if checkpoint_met(checkpoint["check"], outcome, task.deadline):
            points += checkpoint["weight"]
        else:
            late = " (done after the deadline)" if checkpoint_met(checkpoint["check"], outcome, end) else ""
            notes.append(f"{checkpoint['name']}{late}: {checkpoint['feedback']}")
    return Score(points, sum(c["weight"] for c in task.check["checkpoints"]), tuple(notes))
