"""Validation of generated days: the reference schedule meets every checkpoint of every task; doing nothing meets
none."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

from occubench.sandbox.provider import Provider
from occubench.workplace.environment import WorkplaceEnvironment
from occubench.workplace.model import Day, build
from occubench.workplace.schedule import TOOLSET, minutes_of, reference_schedule
from occubench.workplace.templates import FAMILIES, family
from occubench.workplace.world import Outcome, Score


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


def tools_of(day: Day) -> frozenset[str]:
    """The tools the day's tasks need beyond every day's (the shell, images)."""
    return frozenset().union(*(FAMILIES[t.family].tools for t in day.tasks if t.family in FAMILIES))


def validate_day(day: Day, provider: Provider | None = None) -> DayValidation:
    """The day played by its reference schedule and left untouched, each scored. The reference's shell commands
    run by ``provider`` (one that fails is an error); without one they only take their minutes on the clock, which
    is enough to show the day can be done in time (the reference's answers do not depend on their output)."""
    toolset = replace(TOOLSET, tools=TOOLSET.tools | tools_of(day))
    with tempfile.TemporaryDirectory(prefix="occubench-day-") as folder:
        played = WorkplaceEnvironment(*build(day, Path(folder) / "day"), toolset, family, provider=provider)
        # What doing nothing leaves: no file written, message sent, room booked or meeting attended (our checkpoints
        # read only those, never the folders).
        untouched = Outcome(Path(folder) / "day" / "workspace", rooms=dict(day.rooms))
        errors = []
        for step in reference_schedule(day)[0]:
            if step["tool"] == "execute_command" and provider is None:
                played.now += timedelta(minutes=minutes_of("execute_command"))
                continue
            observation = played.call(step["tool"], step["arguments"])
            if "error" in observation:
                errors.append(f"{step['tool']}: {observation['error']}: {observation.get('message', '')}")
            elif observation.get("exit_code", 0) != 0:
                errors.append(f"{step['tool']}: exit code {observation['exit_code']}: {observation['output'][-300:]}")
        reference, noop = ([FAMILIES[task.family].evaluate(task, outcome) for task in played.tasks]
                           for outcome in (played.outcome(), untouched))
        return DayValidation(day, reference, noop, errors)
