"""The contract every Trainee-Bench task family implements here: it generates its task into a day (files on the
workspace and the company's cloud disk, reply rules for the colleagues who hold its clues, meetings on the
calendar) and scores what the agent left behind in the reference's points.

A family is named by the reference's task name (``"Transaction Data Review"``): the name its configs use. Its
``generate`` takes the config's ``arguments`` as keywords (a wrong or missing one is a :class:`ConfigError` naming
it) and returns the :class:`TaskSpec` its ``evaluate`` later scores; everything the score needs (ground truth,
file names, the colleague to be asked) is in ``TaskSpec.check``, so a spec read back from JSON scores the same.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class Employee:
    name: str
    department: str
    position: str


@dataclass
class Company:
    """The day's colleagues, and the reply rules each has been given (a manual to point to, a code to relay)."""

    employees: list[Employee]
    rules: dict[str, list[str]] = field(default_factory=dict)

    def in_department(self, department: str) -> list[Employee]:
        return [e for e in self.employees if e.department == department]

    def manager_of(self, department: str) -> Employee:
        """The department's manager (its first employee whose position says so, else its first employee)."""
        staff = self.in_department(department)
        if not staff:
            raise KeyError(f"no department {department!r}")
        return next((e for e in staff if "Manager" in e.position), staff[0])

    def add_rule(self, who: Employee | str, rule: str) -> None:
        self.rules.setdefault(who if isinstance(who, str) else who.name, []).append(rule)


@dataclass(frozen=True)
class Meeting:
    """A calendar entry: who is expected, where and when; ``notes`` is what is said in it (read to an attendee who
    is there on time)."""

    title: str
    start: datetime
    hours: float
    room: str
    attendees: tuple[str, ...]
    notes: str = ""


@dataclass
class Day:
    """What a day's generation builds on: the agent's workspace and the company's cloud disk (folders), the
    company, the calendar, the day's start, and the day's random source (seeded: the same seed, the same day)."""

    workspace: Path
    cloud_disk: Path
    company: Company
    start: datetime
    rng: random.Random
    #: The reference's own files (its manuals, templates, résumés, articles), as `occubench data download
    #: traineebench` fetches them at a pinned commit: ``reference / "schemas/tasks/<family>/templates/..."``.
    reference: Path
    meetings: list[Meeting] = field(default_factory=list)
    #: Meeting rooms that can be booked, with their capacity.
    rooms: dict[str, int] = field(default_factory=dict)
    #: What each image the families drew shows, in words and numbers, by the sha256 of its bytes: the text an agent
    #: that takes no images reads instead (a copy the agent downloads is the same image).
    image_text: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskSpec:
    """A generated task: ``family`` (the reference's task name), what the agent is told, its deadline, and what
    the family's ``evaluate`` needs (JSON data only)."""

    family: str
    description: str
    deadline: datetime
    check: Mapping[str, Any]


@dataclass(frozen=True)
class Message:
    sender: str
    recipient: str
    text: str
    at: datetime


@dataclass(frozen=True)
class Attendance:
    """The agent's presence at a meeting: when it joined (None: never), and what it wrote there."""

    meeting: str
    joined: datetime | None


@dataclass
class Outcome:
    """What the agent left behind when the day ended: its workspace as it is, every message it sent and received,
    the meetings it attended and booked, and a judge for the checks the reference leaves to a model (a prompt in,
    the judge's text out; None in a run without a judge)."""

    workspace: Path
    messages: list[Message] = field(default_factory=list)
    attended: list[Attendance] = field(default_factory=list)
    booked: list[Meeting] = field(default_factory=list)
    judge: Callable[[str], str] | None = None

    def chat_with(self, who: str) -> list[Message]:
        """The messages between the agent and ``who``, in order."""
        return [m for m in self.messages if who in (m.sender, m.recipient)]


@dataclass(frozen=True)
class Score:
    """The reference's points for one task, and notes saying what was missed (its mentor feedback)."""

    points: float
    full: float
    notes: tuple[str, ...] = ()

    @property
    def fraction(self) -> float:
        return self.points / self.full if self.full else 0.0


#: Three hints for one task, each stronger than the last: the insight, whom to ask and what matters, the plan.
Hints = tuple[str, str, str]


class Family(Protocol):
    #: The reference's task name, as its configs give it.
    name: str
    #: "easy" or "hard", the paper's Table 4 split. The paper names ADs Strategy Plan and Event Planning as hard and
    #: lists no others, nor does the reference's code; the rest are placed by the paper's criteria (more steps and
    #: tool calls, clues hidden with colleagues, optimisation), each family's reason beside its value.
    difficulty: str

    def generate(self, day: Day, **arguments: Any) -> TaskSpec: ...

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score: ...

    def sample_arguments(self, rng: random.Random) -> dict[str, Any]:
        """Config ``arguments`` for a new instance of this task, drawn by ``rng`` from the values the reference's
        own sampler for the family draws from (the paper's Day 2: the same tasks, other parameters)."""
        ...

    def hints(self, task: TaskSpec) -> Hints:
        """The paper's three tiers of guidance for ``task``, in increasing strength: what the work really needs and
        where its information is; whom to ask and which files and rules matter; the plan, tool by tool. None
        gives away an answer: no value a checkpoint compares is in them."""
        ...
