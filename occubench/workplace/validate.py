"""Validation of generated days: the reference schedule meets every checkpoint of every task; doing nothing meets
none."""

from __future__ import annotations

from dataclasses import dataclass

from occubench.workplace.environment import WorkplaceEnvironment
from occubench.workplace.model import Day
from occubench.workplace.schedule import reference_schedule
from occubench.workplace.scoring import TaskScore, score_day


@dataclass
class DayValidation:
    day: Day
    reference: list[TaskScore]
    noop: list[TaskScore]
    errors: list[str]

    @property
    def ok(self) -> bool:
        return not self.errors and all(s.success for s in self.reference) and all(s.score == 0 for s in self.noop)


def validate_day(day: Day) -> DayValidation:
    env = WorkplaceEnvironment(day)
    errors = []
    for step in reference_schedule(day)[0]:
        observation = env.call(step["tool"], step["arguments"])
        if "error" in observation:
            errors.append(f"{step['tool']}: {observation['error']}: {observation.get('message', '')}")
    return DayValidation(day, score_day(day, env), score_day(day, WorkplaceEnvironment(day)), errors)
