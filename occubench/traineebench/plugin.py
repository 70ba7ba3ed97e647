"""Trainee-Bench as a plugin (``--suite traineebench --traineebench-config FILE``): the config's days generated
from ``--seed`` (the families' data drawn from it; the reference's own files read from ``--reference-dir``, else
from the copy ``occubench data download traineebench`` made), an episode per day, the agent's shell commands run only
in the sandbox."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console

from occubench.config import RunConfig
from occubench.core.options import SuiteOptions
from occubench.core.results import Result
from occubench.core.suite import Suite, SuiteDefinition, SuitePlan, ValidateOptions, select_tasks, task_set
from occubench.core.tables import Table
from occubench.core.task import Task
from occubench.errors import ConfigError, DataNotFoundError
from occubench.llm import Model
from occubench.sandbox.provider import provider_for
from occubench.traineebench.config import BenchConfig, load_config, paper_days
from occubench.traineebench.day import build_day
from occubench.traineebench.families import family
from occubench.traineebench.family import Outcome, Score
from occubench.traineebench.reference import reference_folder
from occubench.traineebench.scoring import reference_tables
from occubench.traineebench.suite import PlannedDay, TraineeBenchSuite, mentor_feedback
from occubench.util.jsonl import json_digest
from occubench.util.untrusted import read_file

NAME = "traineebench"


class TraineeBenchOptions(SuiteOptions):
    #: The benchmark config (the reference's ``traineebench_config.json`` format).
    traineebench_config: str | None = None
    #: The reference's own files (manuals, templates, résumés, articles); None: the copy `occubench data download
    #: traineebench` made.
    reference_dir: str | None = None
    #: When there is no such copy, download it.
    download: bool = False
    #: Where no sandbox is available, run the agent's shell commands as plain processes all the same.
    trust_world_code: bool = False
    #: Run each scenario's days in order, the agent starting each day after the first with its mentor's feedback
    #: on the day before (the reference's evaluators' notes), as the reference's continual-learning runs do.
    mentor_feedback: bool = False
    #: Each scenario as the paper's continual-learning experiment has it: its first day, then a second with the
    #: same tasks and new arguments (the config's later days are not used).
    paper_day_two: bool = False


def planned_days(bench: BenchConfig, seed: int, reference: Path, *, paper_day_two: bool) -> list[list[PlannedDay]]:
    """Each scenario's days, generated in order from ``seed`` (under a temporary folder removed when the process
    ends: episodes play copies of it)."""
    root = Path(tempfile.mkdtemp(prefix="traineebench-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    scenarios = [paper_days(scenario, seed) if paper_day_two else scenario for scenario in bench.scenarios]
    return [[PlannedDay(scenario.name, entry.name,
                        build_day(root / f"{s}" / f"{d}", scenario.name, entry, seed=seed, reference=reference,
                                  where=f"{bench.path}: scenarios[{s}]" + (
                                      " (day 2 drawn by --paper-day-two): " if paper_day_two and d
                                      else f".days[{d}].")))
             for d, entry in enumerate(scenario.days)] for s, scenario in enumerate(scenarios)]


def config_and_reference(given: str, reference_dir: str | None, *, download: bool) -> tuple[Path, Path]:
    """The config file ``--traineebench-config`` names and the folder of the reference files. A bare file name not
    in the working folder names one of the reference's own configs (``traineebench_config.json``,
    ``traineebench_cl_config.json``), read from the reference files; one found in neither place is a
    :class:`ConfigError` naming both."""
    path = Path(given)
    bare = path.name == given and not path.exists()
    if reference_dir:
        reference = Path(reference_dir)
    else:
        try:
            reference = reference_folder(download=download)
        except DataNotFoundError as exc:
            if not bare:
                raise
            raise ConfigError(f"--traineebench-config {given}: no such file in the working folder ({Path.cwd()}), "
                              f"and {exc}") from None
    if not bare:
        return path, reference
    if not (reference / given).is_file():
        configs = ", ".join(sorted(found.name for found in reference.glob("*.json"))) or "none"
        raise ConfigError(f"--traineebench-config {given}: no such file in the working folder ({Path.cwd()}) nor in "
                          f"the reference files ({reference}, whose configs are: {configs})")
    return reference / given, reference


def plan(config: RunConfig, console: Console) -> SuitePlan:
    options = TraineeBenchOptions.of(config)
    if options.traineebench_config is None:
        raise ConfigError("--suite traineebench needs --traineebench-config FILE: a benchmark config in the "
                          "reference's format (traineebench_config.json)")
    path, reference = config_and_reference(options.traineebench_config, options.reference_dir,
                                           download=options.download)
    days = planned_days(load_config(path), config.seed, reference, paper_day_two=options.paper_day_two)
    provider = provider_for(options.trust_world_code, "--suite traineebench (the agent's shell commands)")
    every = TraineeBenchSuite([planned for scenario in days for planned in scenario], provider).tasks()
    phases = [[scenario[n] for scenario in days if n < len(scenario)] for n in range(max(map(len, days)))] \
        if options.mentor_feedback else [[planned for scenario in days for planned in scenario]]
    first = {planned.task_id for planned in phases[0]}
    tasks = select_tasks([task for task in every if task.task_id in first], config, console)
    roles: dict[str, str | None] = {**({"npc": config.npc_model} if config.npc_model else {}),
                                    **({"verifier": config.verifier_model} if config.verifier_model else {})}
    settings = {"sandbox": provider.describe(), "traineebench_config": str(path), "reference_dir": str(reference),
                "colleagues": "npc model" if config.npc_model else "reply rules",
                "judge": "verifier model" if config.verifier_model else "none (judged checks score 0)"}

    def phase(number: int, todo: list[Task], told: dict[str, str]) -> SuitePlan:
        def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
            return TraineeBenchSuite(phases[number], provider, colleagues=models.get("npc"),
                                     judge=models.get("verifier"), told=told)

        def follow_up(results: dict[Any, Result]) -> SuitePlan:
            # A day whose day before was selected and scored follows it, told that day's mentor feedback.
            before = {planned.scenario: planned.task_id for planned in phases[number]}
            after = {planned.task_id: before[planned.scenario] for planned in phases[number + 1]
                     if planned.scenario in before}
            told = {day: mentor_feedback(results[(previous, 0)]) for day, previous in after.items()
                    if (previous, 0) in results and results[(previous, 0)].ok}
            return phase(number + 1, [task for task in TraineeBenchSuite(phases[number + 1], provider, told=told)
                                      .tasks() if task.task_id in told], told)
        return SuitePlan(todo, roles, make, world_label=None, simulated=False, settings=settings,
                         follow_up=follow_up if number + 1 < len(phases) else None,
                         task_set=task_set(every, {"task_content": json_digest(
                             [read_file(path).decode("utf-8", "replace"), config.seed, options.paper_day_two,
                              options.mentor_feedback])}))
    return phase(0, tasks, {})


def check(options: ValidateOptions, console: Console) -> bool:
    """Every day of the config generates, and no task earns its full points with nothing done. False otherwise."""
    if options.traineebench_config is None:
        raise ConfigError("validate --suite traineebench needs --traineebench-config FILE")
    path, reference = config_and_reference(options.traineebench_config, options.reference_dir, download=False)
    days = [planned for scenario in planned_days(load_config(path), options.seed,
                                                   reference, paper_day_two=False) for planned in scenario]
    families: dict[str, list[Score]] = defaultdict(list)
    for planned in days:
        for spec in planned.built.tasks:  # the day as generated is what doing nothing leaves
            families[spec.family].append(family(spec.family).evaluate(spec, Outcome(planned.built.day.workspace)))
    rows = [[name, str(len(scores)), f"{sum(s.points for s in scores) / len(scores):.2f} of "
             f"{sum(s.full for s in scores) / len(scores):.2f}", str(sum(s.points >= s.full for s in scores))]
            for name, scores in sorted(families.items())]
    console.print(Table(f"Trainee-Bench days of {options.traineebench_config} from seed {options.seed}: doing "
                        "nothing must leave every task short of its full points",
                        ["Family", "Tasks", "Doing nothing earns (mean)", "Trivially passed"], rows))
    passed = sum(int(row[3]) for row in rows)
    console.print(f"{len(days)} day(s), {sum(map(len, families.values()))} task(s) generated; {passed} passed by "
                  "doing nothing")
    return passed == 0


suite = SuiteDefinition(
    name=NAME, plan=plan, report_tables=reference_tables, validate=check,
    description="Trainee-Bench as its authors run it: their benchmark configs and task families, scored in their "
                "points (needs --traineebench-config, and `occubench data download traineebench` or --reference-dir)")
