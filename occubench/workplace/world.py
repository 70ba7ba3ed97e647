"""The one contract between the day engine and its task libraries (our generated days, Trainee-Bench's configs):
the world a day's tasks are generated into (folders, company, calendar, the day's random source), the tasks as
the agent meets them, what the agent left behind when the day ended, and a task family's score of it.

A library builds a :class:`World` and its :class:`DayTask` list; every task names its family, whose ``evaluate``
later scores the :class:`Outcome` from the task's ``check`` alone (JSON data), so a task read back scores the same.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from occubench.workplace.people import Company, Message


@dataclass(frozen=True)
class Meeting:
    """A calendar entry: who is expected, where and when; ``notes`` is what is said in it (told to whoever
    attends), ``booked_at`` when the agent booked it (None: on the calendar when the day began)."""

    title: str
    start: datetime
    hours: float
    room: str
    attendees: tuple[str, ...]
    notes: str = ""
    booked_at: datetime | None = None


@dataclass(frozen=True)
class Attendance:
    """The agent's presence at a meeting: its title and when the agent joined (None: never)."""

    meeting: str
    joined: datetime | None


@dataclass
class World:
    """What a day's tasks are generated into: the agent's workspace and the company's cloud disk (folders), the
    company, the calendar's meetings and rooms, the day's start (and end, after which nothing can be done), the
    day's random source (seeded: the same seed, the same day) and the reference's own files where a library has
    them."""

    workspace: Path
    cloud_disk: Path
    company: Company
    start: datetime
    rng: random.Random
    reference: Path = Path()
    meetings: list[Meeting] = field(default_factory=list)
    #: Meeting rooms that can be booked, with their capacity.
    rooms: dict[str, int] = field(default_factory=dict)
    #: What each image shows, in words and numbers, by the sha256 of its bytes: the text an agent that takes no
    #: images reads instead (a copy the agent downloads is the same image).
    image_text: dict[str, str] = field(default_factory=dict)
    end: datetime | None = None
    #: When rooms can be booked, as hours of the day.
    office_hours: tuple[int, int] = (9, 17)


@dataclass(frozen=True)
class DayTask:
    """A task of the day: its family, what the agent is told, its deadline, what the family's ``evaluate`` needs
    (JSON data only), and how it is shown: when it reaches the agent (``start``, ``meeting:<title>`` once that
    meeting is attended, ``task:<id>`` once that task is done), its guidance tiers 1–3 (never a checkpoint's value),
    difficulty (easy or hard) and priority."""

    family: str
    description: str
    deadline: datetime
    check: Mapping[str, Any]
    id: str = ""
    appears: str = "start"
    hints: tuple[str, ...] = ()
    difficulty: str = "easy"
    priority: str = "normal"
    category: str = ""


@dataclass(frozen=True)
class Write:
    """A file the agent wrote with ``write_file``, and when."""

    path: str
    content: str
    at: datetime


@dataclass
class Outcome:
    """What the agent left behind: its workspace as it is, the direct messages and the group ones (recipient: the
    group's name), the files it wrote, the meetings it attended and booked, when it stopped, and a judge for the
    checks a family leaves to a model (a prompt in, the judge's text out; None in a run without a judge)."""

    workspace: Path
    messages: list[Message] = field(default_factory=list)
    attended: list[Attendance] = field(default_factory=list)
    booked: list[Meeting] = field(default_factory=list)
    judge: Callable[[str], str] | None = None
    group_messages: list[Message] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    rooms: dict[str, int] = field(default_factory=dict)

    def chat_with(self, who: str) -> list[Message]:
        """The messages between the agent and ``who``, in order."""
        return [m for m in self.messages if who in (m.sender, m.recipient)]


@dataclass(frozen=True)
class Score:
    """A family's points for one task, and notes saying what was missed (the mentor's feedback)."""

    points: float
    full: float
    notes: tuple[str, ...] = ()

    @property
    def fraction(self) -> float:
        return self.points / self.full if self.full else 0.0


@dataclass(frozen=True)
class Toolset:
    """The tools a library's days offer (``occubench.workplace.environment.TOOLS`` names) and the minutes each
    action takes on the day's clock (``default`` for the others)."""

    tools: frozenset[str]
    minutes: Mapping[str, int] = field(default_factory=dict)
    default: int = 1


class Family(Protocol):
    @property
    def name(self) -> str:
        """Its name, as the library's days and configs give it."""

    @property
    def difficulty(self) -> str:
        """easy or hard (the paper's Table 4)."""

    def evaluate(self, task: DayTask, outcome: Outcome) -> Score: ...
