"""A workplace day as data: tasks with deadlines and weighted checkpoints, colleagues who hold clues, files,
rooms and meetings. Everything is plain JSON, so a generated day is written to disk and read back unchanged."""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from typing import Any, get_args, get_origin, get_type_hints

#: What every task was filed under before tasks had their own category.
DEFAULT_CATEGORY = "Business & Enterprise"


def minutes(clock: str) -> int:
    """``"14:05"`` → minutes since midnight."""
    hours, mins = clock.split(":")
    return int(hours) * 60 + int(mins)


def clock(total: int) -> str:
    return f"{total // 60:02d}:{total % 60:02d}"


def _words(text: str) -> list[str]:
    """Lower-case words: runs of letters and digits, so whitespace and punctuation only separate them."""
    return re.findall(r"[^\W_]+", text.lower())


def _mentions(words: list[str], trigger: str) -> bool:
    """Whether ``words`` hold ``trigger``'s words in a row, each whole: "end" is not in "send". The last word also
    matches its plural ("limit" → "limits", "policy" → "policies") or, when the trigger ends in ``*``, any word it
    begins ("mandat*" → "mandatory")."""
    *head, last = _words(trigger)
    forms = {last, last + "s", last + "es", last[:-1] + "ies" if last.endswith("y") else last}
    size = len(head)
    return any(words[i:i + size] == head and
               (words[i + size].startswith(last) if trigger.endswith("*") else words[i + size] in forms)
               for i in range(len(words) - size))


@dataclass
class Clue:
    id: str
    text: str
    #: Every group must be met by the message, each group by any one of its triggers: a word or a phrase, matched
    #: as whole words (see :func:`_mentions`).
    trigger: list[list[str]]

    def asked_by(self, message: str) -> bool:
        """Whether ``message`` asks for this clue: it meets every group of the trigger."""
        words = _words(message)
        return all(any(_mentions(words, trigger) for trigger in group) for group in self.trigger)


@dataclass
class Colleague:
    name: str
    role: str
    department: str
    clues: list[Clue] = field(default_factory=list)


@dataclass
class Checkpoint:
    """One verifiable step; ``check`` is data: ``{"kind": ..., ...}`` (see :mod:`occubench.workplace.scoring`)."""

    name: str
    weight: int
    feedback: str
    check: dict[str, Any]


@dataclass
class Meeting:
    id: str
    title: str
    start: str
    end: str
    room: str
    #: What the organiser says in the meeting (a task can be handed out there).
    notes: str = ""


@dataclass
class WorkTask:
    id: str
    family: str
    kind: str  # synthesis, scheduling, inquiry or optimisation
    difficulty: str  # easy or hard
    priority: str  # high, normal or low
    objective: str
    deadline: str
    checkpoints: list[Checkpoint]
    #: When the task reaches the agent's list: "start", "meeting:<id>" (handed out there) or "task:<id>" (once
    #: that task's report is delivered).
    appears: str = "start"
    #: The reference solution: tool calls in order.
    reference: list[dict[str, Any]] = field(default_factory=list)
    #: One of OccuBench's ten industry categories (``occubench.core.task.CATEGORY_ABBREVIATIONS``).
    category: str = DEFAULT_CATEGORY
    #: Guidance of increasing strength (``--guidance 1..3``): where to look; whom to ask and what for; the plan step
    #: by step. Never a checkpoint's value.
    hints: list[str] = field(default_factory=list)


@dataclass
class Day:
    id: str
    seed: int
    start: str
    end: str
    tasks: list[WorkTask]
    colleagues: list[Colleague]
    groups: dict[str, list[str]]
    drive: dict[str, str]
    rooms: dict[str, int]  # name → capacity
    meetings: list[Meeting]
    #: Room bookings that already exist: {"room", "start", "end"}.
    busy: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Day:
        """A day from its JSON; a ``ValueError`` names the first key that is missing, unknown or of the wrong type
        (``tasks[0].deadline: expected a string, got 900``)."""
        day: Day = _load(cls, data, "")
        if not day.tasks:
            raise ValueError("tasks: a day needs at least one task")
        return day


_EXPECTED = {str: "a string", int: "an integer", list: "a list", dict: "an object"}


def _load(kind: Any, value: Any, where: str) -> Any:
    """``value`` checked against ``kind`` — a dataclass of this module, ``list[...]``, ``dict[str, ...]``, ``str``,
    ``int`` or ``Any`` — all the way down, and built into it."""
    if kind is Any:
        return value
    record = is_dataclass(kind)
    expected = dict if record else get_origin(kind) or kind
    if not isinstance(value, expected) or isinstance(value, bool):  # bool is an int to Python, not to a day file
        raise ValueError(f"{_at(where)}expected {_EXPECTED[expected]}, got {_shown(value)}")
    if record:
        known = {f.name: f for f in fields(kind)}
        unknown = sorted(set(value) - set(known))
        missing = [name for name, f in known.items()
                   if name not in value and f.default is MISSING and f.default_factory is MISSING]
        if unknown or missing:
            raise ValueError(_at(where) + (f"unknown key {unknown[0]!r}" if unknown else f"missing key {missing[0]!r}"))
        hints = get_type_hints(kind)
        return kind(**{name: _load(hints[name], item, f"{where}.{name}" if where else name)
                       for name, item in value.items()})
    if expected is list:
        return [_load(get_args(kind)[0], item, f"{where}[{i}]") for i, item in enumerate(value)]
    if expected is dict:  # JSON keys are strings already
        return {key: _load(get_args(kind)[1], item, f"{where}.{key}") for key, item in value.items()}
    return value


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def _shown(value: Any) -> str:
    """A JSON value as an error message shows it: containers by their type, short values as they are."""
    if isinstance(value, (dict, list)):
        return _EXPECTED[type(value)]
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."
