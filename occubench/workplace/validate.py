"""Validation of generated days: the reference schedule meets every checkpoint of every task; doing nothing meets
none."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from occubench.workplace.environment import WorkplaceEnvironment
from occubench.workplace.model import Day, build
from occubench.workplace.schedule import TOOLSET, reference_schedule
from occubench.workplace.templates import FAMILIES, family
from occubench.workplace.world import Score


@dataclass
class DayValidation:
    day: Day
    reference: list[Score]
    noop: list[Score]
    errors: list[str]

    @property
    def ok(self) -> bool:
        return not self.errors and all(s.points == s.full for s in self.reference) and \
            all(s.points == 0 for s in self.noop)


def validate_day(day: Day) -> DayValidation:
    with tempfile.TemporaryDirectory(prefix="occubench-day-") as folder:
        played, untouched = (WorkplaceEnvironment(*build(day, Path(folder) / name), TOOLSET, family)
                             for name in ("reference", "noop"))
        errors = []
        for step in reference_schedule(day)[0]:
            observation = played.call(step["tool"], step["arguments"])
            if "error" in observation:
                errors.append(f"{step['tool']}: {observation['error']}: {observation.get('message', '')}")
        reference, noop = ([FAMILIES[task.family].evaluate(task, env.outcome()) for task in env.tasks]
                           for env in (played, untouched))
        return DayValidation(day, reference, noop, errors)
