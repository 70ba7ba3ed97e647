"""Our workplace days as data: tasks with deadlines and weighted checkpoints, colleagues who hold clues, files,
rooms and meetings. Everything is plain JSON, so a generated day is written to disk and read back unchanged; it is
built into the day engine's world (:func:`build`) to be played."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from occubench.workplace.drawing import draw
from occubench.workplace.people import AGENT, Clue, Colleague, Company
from occubench.workplace.world import DayTask, World
from occubench.workplace.world import Meeting as Entry

#: What every task was filed under before tasks had their own category.
DEFAULT_CATEGORY = "Business & Enterprise"
#: The date our days are played on (the clock needs one; the work does not depend on it).
DATE = datetime(2025, 10, 1)

__all__ = ["Checkpoint", "Clue", "Colleague", "Day", "Drawing", "Meeting", "WorkTask", "build"]


def minutes(clock: str) -> int:
    """``"14:05"`` → minutes since midnight."""
    hours, mins = clock.split(":")
    return int(hours) * 60 + int(mins)


def clock(total: int) -> str:
    return f"{total // 60:02d}:{total % 60:02d}"


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
class Drawing:
    """An image on the drive, drawn when the day is built (:func:`occubench.workplace.drawing.draw` of ``spec``),
    and what it shows in words and numbers (``text``): what an agent that takes no images reads instead."""

    spec: dict[str, Any]
    text: str


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
    #: Images on the drive by path (days written before images had none).
    images: dict[str, Drawing] = field(default_factory=dict)

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


def at(day_time: str) -> datetime:
    return DATE + timedelta(minutes=minutes(day_time))


def build(day: Day, root: Path) -> tuple[World, list[DayTask]]:
    """``day`` as the engine plays it, its files under ``root`` (which must not exist yet): the drive as the cloud
    disk (its images drawn, and what each shows recorded), an empty workspace, the meetings (the agent expected at
    each) and the rooms already booked on the calendar, and each task with its checkpoints as the data
    :func:`occubench.workplace.scoring.evaluate` reads."""
    workspace, disk = root / "workspace", root / "cloud_disk"
    workspace.mkdir(parents=True)
    disk.mkdir()
    for path, text in day.drive.items():
        (disk / path).parent.mkdir(parents=True, exist_ok=True)
        (disk / path).write_text(text, encoding="utf-8")
    shown: dict[str, str] = {}
    for path, drawing in day.images.items():
        png = draw(drawing.spec)
        (disk / path).parent.mkdir(parents=True, exist_ok=True)
        (disk / path).write_bytes(png)
        shown[hashlib.sha256(png).hexdigest()] = drawing.text
    hours = (at(day.end) - at(day.start)) / timedelta(hours=1)
    meetings = [Entry(m.title, at(m.start), (at(m.end) - at(m.start)) / timedelta(hours=1), m.room, (AGENT,), m.notes)
                for m in day.meetings]
    meetings += [Entry("Reserved", at(b["start"]), (at(b["end"]) - at(b["start"])) / timedelta(hours=1), b["room"], ())
                 for b in day.busy]
    world = World(workspace, disk, Company(day.colleagues, day.groups), at(day.start), random.Random(day.seed),
                  meetings=meetings, rooms=dict(day.rooms), image_text=shown, end=at(day.end),
                  office_hours=(at(day.start).hour, at(day.start).hour + int(hours)))
    return world, day_tasks(day)


def day_tasks(day: Day) -> list[DayTask]:
    """The day's tasks as the engine shows and scores them, each with its checkpoints as the data
    :func:`occubench.workplace.scoring.evaluate` reads."""
    titles = {m.id: m.title for m in day.meetings}
    starts = {m.id: m.start for m in day.meetings}
    return [DayTask(t.family, t.objective, at(t.deadline),
                     {"checkpoints": [_check(asdict(c), titles, starts) for c in t.checkpoints],
                      "day_end": at(day.end).isoformat()},
                     id=t.id, appears=_titled(t.appears, titles), hints=tuple(t.hints), difficulty=t.difficulty,
                     priority=t.priority, category=t.category) for t in day.tasks]


def _check(checkpoint: dict[str, Any], titles: dict[str, str], starts: dict[str, str]) -> dict[str, Any]:
    """A checkpoint whose meeting is named by id (day files before meetings were found by title) by its title."""
    check = checkpoint["check"]
    if check["kind"] == "attended" and check["meeting"] in titles:
        checkpoint["check"] = {**check, "meeting": titles[check["meeting"]], "start": starts[check["meeting"]]}
    return checkpoint


def _titled(appears: str, titles: dict[str, str]) -> str:
    """A task's arrival by its meeting's title (day files name the meeting by id or, since meetings are found by
    title, by title)."""
    kind, _, ref = appears.partition(":")
    return f"meeting:{titles.get(ref, ref)}" if kind == "meeting" else appears


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
