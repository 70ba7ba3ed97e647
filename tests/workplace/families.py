"""What the family tests share: a family's piece alone in a day of its own, and the drive and checkpoints read back."""

from __future__ import annotations

import csv
import io
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from occubench.workplace.environment import WorkplaceEnvironment
from occubench.workplace.generate import END, START, _set_deadlines
from occubench.workplace.model import Day, build
from occubench.workplace.schedule import TOOLSET
from occubench.workplace.templates import FAMILIES, family
from occubench.workplace.templates.base import ROOMS, Names
from occubench.workplace.validate import tools_of
from occubench.workplace.world import Score


def alone(family: str, draw: int, salt: str) -> Day:
    """A day holding only ``family``'s piece (draw ``draw`` of the series ``salt``), with deadlines set the way
    generated days get them."""
    rng = random.Random(f"{salt}:{family}:{draw}")
    piece = FAMILIES[family].build(rng, Names(rng), "t1")
    day = Day(f"{family}-{draw}", draw, START, END, piece.tasks, piece.colleagues, piece.groups, piece.drive,
              dict(ROOMS), piece.meetings, piece.busy, piece.images)
    _set_deadlines(day, rng)
    return day


def rows(day: Day, part: str) -> list[dict[str, str]]:
    """The CSV file on the drive whose path holds ``part``, as rows."""
    [text] = [content for path, content in day.drive.items() if part in path]
    return list(csv.DictReader(io.StringIO(text)))


def values(day: Day, name: str) -> list[str]:
    """The values the checkpoint called ``name`` checks for."""
    return next(c.check for t in day.tasks for c in t.checkpoints if c.name == name)["values"]


def played(day: Day, root: Path, **options: Any) -> WorkplaceEnvironment:
    """``day`` built under ``root`` (a new folder) as the engine plays it, with the tools its tasks need and
    ``options`` (guidance, responder, the shell's provider)."""
    return WorkplaceEnvironment(*build(day, root), replace(TOOLSET, tools=TOOLSET.tools | tools_of(day)), family,
                                **options)


def scores(env: WorkplaceEnvironment) -> list[Score]:
    """Each task's score on what ``env`` recorded so far."""
    return [FAMILIES[task.family].evaluate(task, env.outcome()) for task in env.tasks]
