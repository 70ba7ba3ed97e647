"""Workplace days as a plugin: generated working days, optionally followed by a second day that carries the
mentor's feedback (``--learning``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from occubench.config import RunConfig
from occubench.errors import ConfigError
from occubench.llm import Model
from occubench.plugins import SuiteDefinition, SuitePlan, ValidateOptions, select_tasks
from occubench.results import Result
from occubench.suite import Suite
from occubench.tables import Table
from occubench.workplace.commands import validate_days
from occubench.workplace.generate import generate_day, generate_days, read_days
from occubench.workplace.model import Day
from occubench.workplace.report import workplace_tables
from occubench.workplace.suite import WORKPLACE_SUITE, WorkplaceSuite, reference_agent
from occubench.workplace.templates import FAMILIES


def plan(config: RunConfig, console: Console) -> SuitePlan:
    if config.learning and config.workplace_dir:
        raise ConfigError("--learning generates both days from --seed; it cannot use --workplace-dir")
    days = read_days(Path(config.workplace_dir)) if config.workplace_dir else generate_days(config.seed, config.days)
    if not days:
        raise ConfigError(f"--workplace-dir: no day files in {config.workplace_dir}")
    return _phase(config, console, days, {})


def _phase(config: RunConfig, console: Console, days: list[Day], carried_over: dict[str, str]) -> SuitePlan:
    tasks = select_tasks(WorkplaceSuite(days, carried_over=carried_over).tasks(), config, console)

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        return WorkplaceSuite(days, models.get("npc"), carried_over, config.guidance)

    def day_two(results: dict[Any, Result]) -> SuitePlan:
        # Only the days selected for day one (--task-ids, --limit, ...) have a day two.
        firsts = [day for day in days if (day.id, 0) in results]
        second = [generate_day(config.seed, int(day.id.split("-d")[1]), phase=2) for day in firsts]
        told = {}
        for first, day in zip(firsts, second):
            result = results.get((first.id, 0))
            feedback = str(result.verdict_details.get("day_feedback", "")) if result else ""
            notes = result.env_info.get("day_notes") if result and config.with_notes else None
            told[day.id] = feedback + (f"\nYour own notes: {notes}" if notes else "")
        return _phase(config, console, second, told)
    return SuitePlan(tasks, {"npc": config.npc_model} if config.npc_model else {}, make, world_label=None,
                     simulated=False, reference=reference_agent(),
                     follow_up=day_two if config.learning and not carried_over else None)


def listing() -> tuple[list[Table], Any]:
    families = [{"name": f.name, "kind": f.kind, "difficulty": f.difficulty, "category": f.category}
                for f in sorted(FAMILIES.values(), key=lambda f: f.name)]
    table = Table(f"Suite {WORKPLACE_SUITE}: task families of the generated days (run with --suite "
                  f"{WORKPLACE_SUITE} --days N --seed S)", ["Family", "Kind of work", "Difficulty", "Category"],
                  [[f["name"], f["kind"], f["difficulty"], f["category"]] for f in families], text_columns=4)
    return [table], {"families": families}


def check(options: ValidateOptions, console: Console) -> bool:
    return validate_days(options.days, options.seed, console)


suite = SuiteDefinition(
    name=WORKPLACE_SUITE, plan=plan, listing=listing, validate=check, report_tables=workplace_tables,
    description="workplace scenarios: generated working days with deadlines, meetings and colleagues who hold "
                "clues (offline with --agent reference)")
