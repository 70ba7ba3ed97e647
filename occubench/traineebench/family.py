"""The contract every Trainee-Bench task family implements: the day engine's (``occubench.workplace.world``: a
name, a difficulty, ``evaluate``) and, to make its tasks, the reference's: ``generate`` builds its task into a day's
world (files on the workspace and the company's cloud disk, reply rules for the colleagues who hold its clues,
meetings on the calendar) from the config's ``arguments`` as keywords (a wrong or missing one is a
:class:`ConfigError` naming it) and returns the task its ``evaluate`` later scores in the reference's points;
everything the score needs (ground truth, file names, the colleague to be asked) is in the task's ``check``.

A family is named by the reference's task name (``"Transaction Data Review"``): the name its configs use. The
engine's names are given here under the reference's: a day is a world, a task spec a day's task, an employee a
colleague.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from occubench.workplace.people import Colleague as Employee
from occubench.workplace.people import Company, Message
from occubench.workplace.world import Attendance, DayTask, Meeting, Outcome, Score
from occubench.workplace.world import World as Day

TaskSpec = DayTask
#: Three tiers of guidance, weakest first.
Hints = tuple[str, str, str]

__all__ = ["Attendance", "Company", "Day", "Employee", "Family", "Hints", "Meeting", "Message", "Outcome", "Score",
           "TaskSpec"]


class Family(Protocol):
    @property
    def name(self) -> str:
        """The reference's task name, as its configs give it."""

    @property
    def difficulty(self) -> str:
        """"easy" or "hard", the paper's Table 4 split. The paper names ADs Strategy Plan and Event Planning as hard
        and lists no others, nor does the reference's code; the rest are placed by the paper's criteria (more steps
        and tool calls, clues hidden with colleagues, optimisation), each family's reason beside its value."""

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
