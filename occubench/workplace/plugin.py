"""Workplace days as a plugin: generated working days; with ``--learning``, each followed by a second day with
the same kinds of tasks, run in three arms: told nothing of day one, told the mentor's feedback and the agent's own
notes, or told the notes a reflection on day one wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field
from rich.console import Console

from occubench.config import RunConfig
from occubench.core.options import SuiteOptions
from occubench.core.results import Result
from occubench.core.suite import (
    Suite,
    SuiteDefinition,
    SuitePlan,
    ValidateOptions,
    select_tasks,
    task_set,
)
from occubench.core.tables import Table
from occubench.errors import ConfigError
from occubench.llm import Model
from occubench.util.jsonl import json_digest
from occubench.workplace.generate import day_id, generate_day, generate_days, read_days
from occubench.workplace.record import DayRecord
from occubench.workplace.report import workplace_overview_tables, workplace_tables
from occubench.workplace.suite import ARMS, WORKPLACE_SUITE, DayTwo, WorkplaceSuite, reference_agent
from occubench.workplace.templates import FAMILIES
from occubench.workplace.validate import validate_day


class WorkplaceOptions(SuiteOptions):
    #: Days generated from ``--seed``.
    days: int = Field(10, ge=1)
    #: A folder of day files to run instead of generated days.
    workplace_dir: str | None = None
    #: Each day followed by a second day of the same kinds of tasks, in three arms (see the module docstring).
    learning: bool = False


def plan(config: RunConfig, console: Console) -> SuitePlan:
    options = WorkplaceOptions.of(config)
    if options.learning and options.workplace_dir:
        raise ConfigError("--learning generates both days from --seed; it cannot use --workplace-dir")
    if options.learning and config.trials > 1:
        # Day two is told of one day one; trials of it would be told of another trial's day, and compared with it.
        raise ConfigError("--learning runs one trial per day (--trials 1): its day two starts with what one day one "
                          "left; for more samples, run more --days")
    if config.reflection_model and not options.learning:
        raise ConfigError("--reflection-model reflects on day one of a --learning run; add --learning")
    days = read_days(Path(options.workplace_dir)) if options.workplace_dir else generate_days(config.seed, options.days)
    if not days:
        raise ConfigError(f"--workplace-dir: no day files in {options.workplace_dir}")
    reflection = config.reflection_model or (config.agent_model if config.agent == "llm" else None)
    if options.learning and not reflection:
        console.print(f"[yellow]--learning with --agent {config.agent}: no model to reflect on day one, so day two "
                      "runs without the reflection arm (give --reflection-model for it)[/yellow]")
    arms = [arm for arm in ARMS if arm != "reflection" or reflection]
    every = WorkplaceSuite(days).tasks()
    tasks = select_tasks(every, config, console)
    # The run's identity: the days' content, and the seed and count they were generated from.
    identity = {"task_content": json_digest([day.to_json() for day in days]), "learning": options.learning,
                **({} if options.workplace_dir else {"workplace_seed": config.seed, "workplace_days": options.days})}
    second_ids = [f"{day_id(config.seed, _index(first.id), 2)}-{arm}" for first in days for arm in arms] \
        if options.learning else []
    roles: dict[str, str | None] = {**({"npc": config.npc_model} if config.npc_model else {}),
                                    **({"reflection": reflection} if options.learning and reflection else {})}

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        return WorkplaceSuite(days, models.get("npc"), config.guidance, reflector=models.get("reflection"))

    def day_two(results: dict[Any, Result]) -> SuitePlan:
        # Only days selected for day one (--task-ids, --limit, ...) and scored have a day two (a day one that ended
        # in an error gets its day two when the next run has retried it); each arm starts it with what it is told.
        seconds, plans = [], {}
        for first in days:
            if (result := results.get((first.id, 0))) is None or (record := DayRecord.from_result(result)) is None:
                continue
            notes = record.reflection_notes
            told = {"none": "", "notes": record.day_feedback,
                    "reflection": f"Your notes after reflecting on it:\n{notes}" if notes else ""}
            seconds.append(generate_day(config.seed, _index(first.id), phase=2))
            plans[seconds[-1].id] = DayTwo(first.id, {arm: told[arm] for arm in arms})

        def make_two(models: dict[str, Model], fault_rules: str | None) -> Suite:
            return WorkplaceSuite(seconds, models.get("npc"), config.guidance, day_two=plans)
        return SuitePlan(WorkplaceSuite(seconds, day_two=plans).tasks(), roles, make_two, world_label=None,
                         simulated=False, reference=reference_agent())
    return SuitePlan(tasks, roles, make, world_label=None, simulated=False, reference=reference_agent(),
                     follow_up=day_two if options.learning else None,
                     task_set=task_set(every, identity, second_ids))


def _index(day: str) -> int:
    """The index of a generated day from its id (``s7-d003`` → 3)."""
    return int(day.split("-d")[1])


def listing() -> tuple[list[Table], Any]:
    families = [{"name": f.name, "kind": f.kind, "difficulty": f.difficulty, "category": f.category}
                for f in sorted(FAMILIES.values(), key=lambda f: f.name)]
    table = Table(f"Suite {WORKPLACE_SUITE}: task families of the generated days (run with --suite "
                  f"{WORKPLACE_SUITE} --days N --seed S)", ["Family", "Kind of work", "Difficulty", "Category"],
                  [[f["name"], f["kind"], f["difficulty"], f["category"]] for f in families], text_columns=4)
    return [table], {"families": families}


def check(options: ValidateOptions, console: Console) -> bool:
    if options.days < 1:  # no day at all would be "0/0 valid"
        raise ConfigError(f"--days: expected at least 1 day to validate, got {options.days}")
    return validate_days(options.days, options.seed, console)


suite = SuiteDefinition(
    name=WORKPLACE_SUITE, plan=plan, listing=listing, validate=check, report_tables=workplace_tables,
    overview_tables=workplace_overview_tables,
    description="workplace scenarios: generated working days with deadlines, meetings and colleagues who hold "
                "clues (offline with --agent reference)")


def validate_days(days: int, seed: int, console: Console) -> bool:
    """Reference schedules meet every checkpoint; doing nothing meets none. False when any day does not."""
    results = [validate_day(day) for day in generate_days(seed, days) + generate_days(seed, days, phase=2)]
    rows = []
    for result in results:
        reference = sum(s.score for s in result.reference) / len(result.reference)
        noop = sum(s.score for s in result.noop) / len(result.noop)
        rows.append([result.day.id, ", ".join(sorted({t.family for t in result.day.tasks})), "; ".join(result.errors),
                     str(len(result.day.tasks)), f"{100 * reference:.0f}%", f"{100 * noop:.0f}%"])
    table = Table(f"Workplace days from seed {seed}: reference must score 100 %, doing nothing 0 %",
                  ["Day", "Families", "Problems", "Tasks", "Reference", "Do nothing"], rows, text_columns=3,
                  optional=("Tasks",))
    console.print(table)
    good = sum(result.ok for result in results)
    console.print(f"{good}/{len(results)} days valid ({days} days and their day-two variants)")
    return good == len(results)
