"""What a meta-task template is: a rule that, given a random generator and the day's name registry, yields a task
with its checkpoints, the clues it hides (in files, or with colleagues) and a reference solution."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from occubench.workplace import scoring
from occubench.workplace.model import Checkpoint, Clue, Colleague, Drawing, Meeting, WorkTask
from occubench.workplace.world import DayTask, Outcome, Score

_FIRST = ("Ada", "Bruno", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Keiko", "Lars",
          "Maya", "Nikos", "Olga", "Pablo", "Quinn", "Rania", "Soren", "Tariq", "Ulla", "Viktor", "Wanda", "Xiao",
          "Yara", "Zane", "Amara", "Bodhi", "Celeste", "Dario", "Esme", "Filip", "Gaia", "Henrik", "Ilse", "Jude")
_LAST = ("Abbott", "Brandt", "Castillo", "Dvorak", "Eriksen", "Fontaine", "Gallo", "Horvat", "Iqbal", "Jansen",
         "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Pires", "Quiroga", "Rossi", "Schneider", "Tanaka",
         "Urbina", "Varga", "Weiss", "Yilmaz", "Zamora", "Achebe", "Bianchi", "Costa", "Duarte", "Ekström")


#: The office's meeting rooms and their seats, the same every day.
ROOMS = {"Aurora": 4, "Birch": 6, "Cedar": 10, "Dune": 16}


class Names:
    """Entity names for one day, unique across all its tasks (people, codes, files)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def _unique(self, make: Callable[[], str]) -> str:
        for _ in range(10_000):
            value = make()
            if value not in self.used:
                self.used.add(value)
                return value
        raise RuntimeError("ran out of unique names")

    def person(self) -> str:
        return self._unique(lambda: f"{self.rng.choice(_FIRST)} {self.rng.choice(_LAST)}")

    def code(self, prefix: str) -> str:
        return self._unique(lambda: f"{prefix}-{self.rng.randint(1000, 9999)}")

    def pick(self, pool: tuple[str, ...]) -> str:
        return self._unique(lambda: self.rng.choice(pool))


@dataclass
class Piece:
    """One generated task and everything it brings into the day."""

    tasks: list[WorkTask]
    colleagues: list[Colleague] = field(default_factory=list)
    drive: dict[str, str] = field(default_factory=dict)
    meetings: list[Meeting] = field(default_factory=list)
    groups: dict[str, list[str]] = field(default_factory=dict)
    busy: list[dict[str, str]] = field(default_factory=list)
    images: dict[str, Drawing] = field(default_factory=dict)


#: A template: (rng, names, task id) → piece. Objectives may contain ``{deadline}``, filled in by the composer.
Template = Callable[[random.Random, Names, str], Piece]


@dataclass(frozen=True)
class Family:
    name: str
    kind: str  # synthesis, scheduling, inquiry, optimisation
    difficulty: str  # easy or hard
    #: The industry it belongs to: one of OccuBench's ten categories (``occubench.core.task.CATEGORY_ABBREVIATIONS``).
    category: str
    build: Template
    #: Tools its tasks need beyond every day's (``execute_command``, ``read_image``).
    tools: frozenset[str] = frozenset()

    def evaluate(self, task: DayTask, outcome: Outcome) -> Score:
        """Every family of ours is scored by its task's checkpoints."""
        return scoring.evaluate(task, outcome)


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool": tool, "arguments": arguments}


def colleague(names: Names, role: str, department: str, *clues: Clue) -> Colleague:
    return Colleague(names.person(), role, department, list(clues))


def checkpoint(name: str, weight: int, feedback: str, **check: Any) -> Checkpoint:
    return Checkpoint(name, weight, feedback, check)


def task(task_id: str, family: Family, objective: str, checkpoints: list[Checkpoint], reference: list[dict[str, Any]],
         *, appears: str = "start", hints: tuple[str, str, str] | None = None) -> WorkTask:
    """A task of ``family``; ``hints`` are its guidance tiers 1–3 (see :attr:`WorkTask.hints`)."""
    return WorkTask(task_id, family.name, family.kind, family.difficulty, "normal", objective, "", checkpoints,
                    appears, reference, family.category, list(hints or ()))
