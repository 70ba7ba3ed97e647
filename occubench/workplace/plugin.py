"""Our workplace days as a plugin: generated working days; with ``--learning``, each followed by a second day with
the same kinds of tasks, in three arms: told nothing of day one, told the mentor's feedback and the agent's own
notes, or told the notes a reflection on day one wrote (:mod:`occubench.workplace.plan`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import Field
from rich.console import Console

from occubench.config import RunConfig
from occubench.core.options import SuiteOptions
from occubench.core.suite import SuiteDefinition, SuitePlan, TaskSet, ValidateOptions
from occubench.core.tables import Table
from occubench.core.task import Task
from occubench.errors import ConfigError
from occubench.sandbox.provider import Provider, provider_for
from occubench.util.jsonl import json_digest
from occubench.workplace.generate import generate_day, generate_days, read_days
from occubench.workplace.model import Day, at, build, day_tasks
from occubench.workplace.plan import day_plan, learning_arms
from occubench.workplace.report import workplace_overview_charts, workplace_overview_tables, workplace_tables
from occubench.workplace.schedule import TOOLSET, reference_schedule
from occubench.workplace.suite import Library, PlannedDay, reference_agent
from occubench.workplace.templates import FAMILIES, family
from occubench.workplace.validate import tools_of, validate_day

WORKPLACE_SUITE = "workplace"


class WorkplaceOptions(SuiteOptions):
    #: Days generated from ``--seed``.
    days: int = Field(10, ge=1)
    #: A folder of day files to run instead of generated days.
    workplace_dir: str | None = None
    #: Each day followed by a second day of the same kinds of tasks, in three arms (see the module docstring).
    learning: bool = False
    #: Where no sandbox is available, run the agent's shell commands as plain processes all the same.
    trust_world_code: bool = False


def instruction(planned: PlannedDay, guidance: int, carried_over: str) -> str:
    """Our day's opening: the tasks are in the task list, shown with their hints there (``guidance``)."""
    text = (f"It is {planned.start:%H:%M}: your working day as a new employee starts now and ends at "
            f"{planned.end:%H:%M}. Your tasks are in your task list (list_tasks); more "
            "can arrive during the day, for instance in meetings. Each has a deadline and a priority, and every "
            "action you take uses up time. Information you do not have is held by colleagues or kept in files: "
            "find it or ask for it (list_users, send_message) rather than guess. When your work is done, call done.")
    return text + (f"\n\nFrom your previous working day:\n{carried_over}" if carried_over else "")


LIBRARY = Library(TOOLSET, family, instruction, "Office work")


def day_category(day: Day) -> str:
    """The most common category among the day's tasks; of those tied, the one met first in task order."""
    counts = Counter(task.category for task in day.tasks)
    return max(counts, key=counts.__getitem__)  # max keeps the first of equals; a Counter keeps first-seen order


def planned(day: Day, after: str = "") -> PlannedDay:
    return PlannedDay(day.id, "Workplace day", tuple(day_tasks(day)), lambda root: build(day, root)[0], at(day.start),
                      day_category(day), 1 + min(2, sum(t.difficulty == "hard" for t in day.tasks)), at(day.end),
                      tools_of(day), after)


def plan(config: RunConfig, console: Console) -> SuitePlan:
    options = WorkplaceOptions.of(config)
    if options.learning and options.workplace_dir:
        raise ConfigError("--learning generates both days from --seed; it cannot use --workplace-dir")
    arms = learning_arms(config, options.learning, console)
    days = read_days(Path(options.workplace_dir)) if options.workplace_dir else generate_days(config.seed, options.days)
    if not days:
        raise ConfigError(f"--workplace-dir: no day files in {options.workplace_dir}")
    seconds = [generate_day(config.seed, _index(first.id), phase=2) for first in days] if arms else []
    every = {day.id: day for day in days + seconds}
    provider = shell(list(every.values()), options.trust_world_code, "--suite workplace (the agent's shell commands)")
    # The run's identity: the days' content, and the seed and count they were generated from.
    identity = {"task_content": json_digest([day.to_json() for day in days]), "learning": options.learning,
                **({} if options.workplace_dir else {"workplace_seed": config.seed, "workplace_days": options.days})}
    second_ids = [f"{second.id}-{arm}" for second in seconds for arm in arms]
    phases = [[planned(day) for day in days]] + ([[planned(s, f.id) for f, s in zip(days, seconds)]] if arms else [])

    def calls(task: Task) -> list[tuple[str, dict]]:
        return [(call["tool"], call["arguments"]) for call in reference_schedule(every[task.metadata["day"]])[0]]
    return day_plan(config, console, LIBRARY, phases, arms, provider=provider,
                    settings={"sandbox": provider.describe()} if provider else {}, reference=reference_agent(calls),
                    task_set=TaskSet(identity, frozenset([day.id for day in days] + second_ids)))


def shell(days: list[Day], trusted: bool, what: str) -> Provider | None:
    """The sandbox that runs the shell commands of ``days``, when one needs the shell (else None); without a sandbox,
    a plain process where ``trusted``, else a :class:`ConfigError` (exit 2) saying so."""
    return provider_for(trusted, what) if any("execute_command" in tools_of(day) for day in days) else None


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
    return validate_days(options.days, options.seed, console, options.trust_world_code)


suite = SuiteDefinition(
    reads=frozenset({"npc", "reflection", "guidance"}), options=(WorkplaceOptions,),
    name=WORKPLACE_SUITE, plan=plan, listing=listing, validate=check, report_tables=workplace_tables,
    overview_tables=workplace_overview_tables, overview_charts=workplace_overview_charts,
    description="workplace scenarios: generated working days with deadlines, meetings and colleagues who hold "
                "clues (offline with --agent reference)")


def validate_days(days: int, seed: int, console: Console, trust_world_code: bool = False) -> bool:
    """Reference schedules meet every checkpoint, their shell commands run in the sandbox (or, with
    ``trust_world_code`` where there is none, as plain processes); doing nothing meets none. False when any day does
    not."""
    every = generate_days(seed, days) + generate_days(seed, days, phase=2)
    provider = shell(every, trust_world_code, "validate --suite workplace (shell commands in its days)")
    results = [validate_day(day, provider) for day in every]
    rows = []
    for result in results:
        reference = sum(s.fraction for s in result.reference) / len(result.reference)
        noop = sum(s.fraction for s in result.noop) / len(result.noop)
        rows.append([result.day.id, ", ".join(sorted({t.family for t in result.day.tasks})), "; ".join(result.errors),
                     str(len(result.day.tasks)), f"{100 * reference:.0f}%", f"{100 * noop:.0f}%"])
    table = Table(f"Workplace days from seed {seed}: reference must score 100 %, doing nothing 0 %",
                  ["Day", "Families", "Problems", "Tasks", "Reference", "Do nothing"], rows, text_columns=3,
                  optional=("Tasks",))
    console.print(table)
    good = sum(result.ok for result in results)
    console.print(f"{good}/{len(results)} days valid ({days} days and their day-two variants)")
    return good == len(results)
