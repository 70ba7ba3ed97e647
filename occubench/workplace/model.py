"""A workplace day as data: tasks with deadlines and weighted checkpoints, colleagues who hold clues, files,
rooms and meetings. Everything is plain JSON, so a generated day is written to disk and read back unchanged."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


def minutes(clock: str) -> int:
    """``"14:05"`` → minutes since midnight."""
    hours, mins = clock.split(":")
    return int(hours) * 60 + int(mins)


def clock(total: int) -> str:
    return f"{total // 60:02d}:{total % 60:02d}"


@dataclass
class Clue:
    id: str
    text: str
    #: Every group must match the message, each group by any one of its words (lower case).
    trigger: list[list[str]]


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
    def from_json(cls, data: dict[str, Any]) -> Day:
        return cls(
            id=data["id"], seed=data["seed"], start=data["start"], end=data["end"],
            tasks=[WorkTask(**{**t, "checkpoints": [Checkpoint(**c) for c in t["checkpoints"]]})
                   for t in data["tasks"]],
            colleagues=[Colleague(**{**c, "clues": [Clue(**k) for k in c["clues"]]}) for c in data["colleagues"]],
            groups=data["groups"], drive=data["drive"], rooms=data["rooms"],
            meetings=[Meeting(**m) for m in data["meetings"]], busy=data["busy"],
        )
