"""How each kind of world plugs into a run: which tasks, which model roles it needs, how its suite is built, and
what it can offer besides (reference solutions, a second phase)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from occubench.agent import Agent
from occubench.data import ensure_data, resolve_data_paths
from occubench.errors import ConfigError
from occubench.executable import BUILTIN_SUITE, ExecutableSuite, builtin_worlds
from occubench.executable.validate import REFERENCE
from occubench.llm import Model
from occubench.lwm import OccuBenchSuite, WorldModelRegistry, load_tasks
from occubench.store import Record
from occubench.suite import Suite
from occubench.task import CATEGORY_ABBREVIATIONS, Task
from occubench.verifier import LabelJudge, RubricVerifier
from occubench.workplace.generate import generate_day, generate_days, read_days
from occubench.workplace.model import Day
from occubench.workplace.suite import WORKPLACE_SUITE, WorkplaceSuite, reference_agent

OCCUBENCH_SUITE = "occubench"


def _split(values: Sequence[str] | None) -> list[str]:
    return [item.strip() for value in values or () for item in value.split(",") if item.strip()]


def select_tasks(tasks: list[Task], task_ids: Sequence[str] | None, categories: Sequence[str] | None,
                 console: Console) -> list[Task]:
    selected = tasks
    if categories:
        lookup = {name.lower(): name for name in CATEGORY_ABBREVIATIONS}
        lookup.update({abbr.lower(): name for name, abbr in CATEGORY_ABBREVIATIONS.items()})
        wanted = set()
        for item in _split(categories):
            if item.lower() not in lookup:
                raise ConfigError(f"--categories: unknown category {item!r}; choose from "
                                  f"{', '.join(f'{n} ({a})' for n, a in CATEGORY_ABBREVIATIONS.items())}")
            wanted.add(lookup[item.lower()])
        selected = [task for task in selected if task.category in wanted]
    if task_ids:
        wanted_ids = _split(task_ids)
        known = {str(task.task_id) for task in tasks}
        unknown = [item for item in wanted_ids if item not in known]
        if unknown:
            console.print(f"[yellow]warning: --task-ids: no task with id {', '.join(unknown)}; "
                          "they are ignored[/yellow]")
        selected = [task for task in selected if str(task.task_id) in set(wanted_ids)]
    return selected


@dataclass
class SuitePlan:
    """What a run needs from the kind of world it evaluates."""

    tasks: list[Task]
    #: Model name per role the suite itself needs (the agent's is added by the run).
    roles: dict[str, str]
    #: Builds the suite once the models exist; gets them and the simulator's fault rules (prompt mode).
    make: Callable[[dict[str, Model], str | None], Suite]
    #: The results' ``world_model`` (None for worlds that are code).
    world_label: str | None
    simulated: bool
    settings: dict[str, Any] = field(default_factory=dict)
    #: Plays each task's reference solution, where the suite has them.
    reference: Agent | None = None
    #: A second phase that depends on the first phase's results (the workplace's day two).
    follow_up: Callable[[dict[Any, Record]], SuitePlan] | None = None


def occubench_plan(args: argparse.Namespace, console: Console) -> SuitePlan:
    if not args.world_model:
        raise ConfigError("--world-model is required: the OccuBench environments are simulated by a model")
    paths = ensure_data(resolve_data_paths(data_dir=args.data_dir, eval_data=args.eval_data,
                                           scenario_pool=args.scenario_pool, config_dir=args.config_dir),
                        download=args.download)
    tasks = select_tasks(load_tasks(paths.eval_data, paths.scenario_pool), args.task_ids, args.categories, console)
    registry = WorldModelRegistry(paths.config_dir)
    for env_name in sorted({task.env_name for task in tasks}):
        registry.get(env_name)  # every config the run needs is checked before any money is spent

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        return OccuBenchSuite(tasks, registry, models["world"],
                              RubricVerifier(models["verifier"], num_votes=args.num_votes), fault_rules=fault_rules)
    return SuitePlan(tasks, {"world": args.world_model, "verifier": args.verifier_model or args.world_model}, make,
                     world_label=args.world_model, simulated=True,
                     settings={"data_paths": {k: str(v) for k, v in asdict(paths).items()}})


def executable_plan(args: argparse.Namespace, console: Console) -> SuitePlan:
    worlds = builtin_worlds()
    tasks = select_tasks(ExecutableSuite(worlds).tasks(), args.task_ids, args.categories, console)

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        judge = models.get("verifier")
        return ExecutableSuite(worlds, LabelJudge(judge, num_votes=args.num_votes) if judge else None)
    return SuitePlan(tasks, {"verifier": args.verifier_model} if args.verifier_model else {}, make,
                     world_label=None, simulated=False, reference=REFERENCE)


def workplace_plan(args: argparse.Namespace, console: Console) -> SuitePlan:
    if args.learning and args.workplace_dir:
        raise ConfigError("--learning generates both days from --seed; it cannot use --workplace-dir")
    days = read_days(Path(args.workplace_dir)) if args.workplace_dir else generate_days(args.seed, args.days)
    if not days:
        raise ConfigError(f"--workplace-dir: no day files in {args.workplace_dir}")
    return _workplace_phase(args, console, days, {})


def _workplace_phase(args: argparse.Namespace, console: Console, days: list[Day],
                     carried_over: dict[str, str]) -> SuitePlan:
    tasks = select_tasks(WorkplaceSuite(days, carried_over=carried_over).tasks(), args.task_ids, args.categories,
                         console)

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        return WorkplaceSuite(days, models.get("npc"), carried_over)

    def day_two(results: dict[Any, Record]) -> SuitePlan:
        second = [generate_day(args.seed, int(day.id.split("-d")[1]), phase=2) for day in days]
        told = {}
        for first, day in zip(days, second):
            record = results.get((first.id, 0), {})
            notes = record.get("day_notes") if args.with_notes else None
            told[day.id] = record.get("day_feedback", "") + (f"\nYour own notes: {notes}" if notes else "")
        return _workplace_phase(args, console, second, told)
    return SuitePlan(tasks, {"npc": args.npc_model} if args.npc_model else {}, make, world_label=None,
                     simulated=False, reference=reference_agent(),
                     follow_up=day_two if args.learning and not carried_over else None)


PLANS: dict[str, Callable[[argparse.Namespace, Console], SuitePlan]] = {
    OCCUBENCH_SUITE: occubench_plan, BUILTIN_SUITE: executable_plan, WORKPLACE_SUITE: workplace_plan}
