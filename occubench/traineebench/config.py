"""Trainee-Bench's benchmark configs read as they are published (``traineebench_config.json``, and what
``customized_bench_configs.py`` writes): scenarios of days of tasks, each task a family's name, the arguments its
generator takes and a deadline. Anything else is a :class:`ConfigError` naming the file and where in it (a JSON path
such as ``scenarios[3].days[0].tasks[2].name``); arguments are checked by their family when a day is generated.
"""

from __future__ import annotations

import json
import random
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from occubench.errors import ConfigError
from occubench.traineebench.families import MODULES, family
from occubench.util.untrusted import read_file

#: The eleven task families, by the names the reference's configs give them.
FAMILY_NAMES = tuple(MODULES)


@dataclass(frozen=True)
class TaskEntry:
    family: str
    arguments: Mapping[str, Any]
    deadline: datetime


@dataclass(frozen=True)
class DayEntry:
    name: str
    tasks: tuple[TaskEntry, ...]


@dataclass(frozen=True)
class ScenarioEntry:
    name: str
    days: tuple[DayEntry, ...]


@dataclass(frozen=True)
class BenchConfig:
    path: Path
    scenarios: tuple[ScenarioEntry, ...]
    version: str | None = None


def load_config(path: Path, families: Collection[str] = FAMILY_NAMES) -> BenchConfig:
    """The config at ``path``; its task names must be among ``families``."""
    try:
        document = json.loads(read_file(path))
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{path}: not JSON: {exc}") from None
    where = _Where(path)
    scenarios = where.field(document, "scenarios", list, "")
    if not scenarios:
        raise ConfigError(f"{path}: scenarios: no scenario")
    version = document.get("version")
    return BenchConfig(path, tuple(_scenario(where, item, f"scenarios[{i}]", families)
                                   for i, item in enumerate(scenarios)), version if isinstance(version, str) else None)


def paper_days(scenario: ScenarioEntry, seed: int) -> ScenarioEntry:
    """``scenario`` as the paper's continual-learning experiment reads it: its first day, then a second with the
    same tasks in the same order and deadlines, each with arguments its family draws anew (seeded by ``seed`` and the
    scenario); the config's own later days are not used."""
    first = scenario.days[0]
    rng = random.Random(f"{seed}/{scenario.name}/day_2 arguments")
    second = tuple(TaskEntry(task.family, family(task.family).sample_arguments(rng), task.deadline)
                   for task in first.tasks)
    return ScenarioEntry(scenario.name, (first, DayEntry("day_2", second)))


class _Where:
    """Errors that name the file and the place in it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, place: str, message: str) -> ConfigError:
        return ConfigError(f"{self.path}: {place}: {message}")

    def field(self, value: object, name: str, kind: type, place: str) -> Any:
        here = f"{place}.{name}" if place else name
        if not isinstance(value, dict):
            raise self.fail(place or "(top)", f"expected an object, found {type(value).__name__}")
        if name not in value:
            raise self.fail(here, "missing")
        found = value[name]
        if not isinstance(found, kind) or isinstance(found, bool) and kind is not bool:
            raise self.fail(here, f"expected {kind.__name__}, found {type(found).__name__}")
        return found


def _scenario(where: _Where, item: object, place: str, families: Collection[str]) -> ScenarioEntry:
    name = where.field(item, "name", str, place)
    days = where.field(item, "days", list, place)
    if not days:
        raise where.fail(f"{place}.days", "no day")
    return ScenarioEntry(name, tuple(_day(where, day, f"{place}.days[{i}]", families) for i, day in enumerate(days)))


def _day(where: _Where, item: object, place: str, families: Collection[str]) -> DayEntry:
    tasks = where.field(item, "tasks", list, place)
    return DayEntry(where.field(item, "name", str, place),
                    tuple(_task(where, task, f"{place}.tasks[{i}]", families) for i, task in enumerate(tasks)))


def _task(where: _Where, item: object, place: str, families: Collection[str]) -> TaskEntry:
    family = where.field(item, "name", str, place)
    if family not in families:
        raise where.fail(f"{place}.name", f"unknown task family {family!r} (known: {', '.join(sorted(families))})")
    arguments = item.get("arguments") if isinstance(item, dict) else None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise where.fail(f"{place}.arguments", f"expected an object, found {type(arguments).__name__}")
    text = where.field(item, "deadline", str, place)
    try:
        deadline = datetime.fromisoformat(text)
    except ValueError:
        raise where.fail(f"{place}.deadline", f"not an ISO date and time: {text[:40]!r}") from None
    return TaskEntry(family, arguments, deadline)
