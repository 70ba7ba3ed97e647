"""Trainee-Bench as a plugin (``--suite traineebench --traineebench-config FILE``): the config's days generated
from ``--seed`` (the families' data drawn from it; the reference's own files read from ``--reference-dir``, else
from the copy ``occubench data download traineebench`` made), an episode per day on the day engine, the agent's
shell commands run only in the sandbox."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from pydantic import Field
from rich.console import Console

from occubench.config import RunConfig
from occubench.core.options import SuiteOptions
from occubench.core.suite import SuiteDefinition, SuitePlan, TaskSet, ValidateOptions
from occubench.core.tables import Table
from occubench.errors import ConfigError, DataNotFoundError
from occubench.sandbox.provider import provider_for
from occubench.traineebench.config import BenchConfig, load_config, paper_days
from occubench.traineebench.day import CATEGORY, build_day
from occubench.traineebench.families import family
from occubench.traineebench.family import Outcome, Score
from occubench.traineebench.reference import reference_folder
from occubench.util.jsonl import json_digest
from occubench.util.untrusted import read_file
from occubench.workplace.environment import TOOLS, guidance
from occubench.workplace.people import AGENT
from occubench.workplace.plan import day_plan, learning_arms, reflection_model
from occubench.workplace.report import workplace_overview_charts, workplace_overview_tables, workplace_tables
from occubench.workplace.suite import Library, PlannedDay, copied
from occubench.workplace.world import Toolset

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
    #: Each scenario's days in order, every day after the first in three arms: told nothing of the day before,
    #: told the mentor's feedback, told a reflection's notes on it (the paper's Table 5).
    learning: bool = False
    #: Each scenario's first day played again this many times, each time told the reflections on every time before
    #: (the paper's repeated self-evolution, Figure 4).
    self_evolution: int = Field(0, ge=0)


#: Every tool of the engine but ours alone (the task list, files read and written directly, the calendar's list);
#: the minutes of the reference's clock, one for each action it does not price.
TOOLSET = Toolset(frozenset(TOOLS) - {"list_tasks", "read_file", "write_file", "list_meetings"},
                  {"send_message": 5, "send_group_message": 10, "create_chat_group": 1, "list_users": 1,
                   "download_file": 10, "open_folder": 1, "book_meeting": 5, "cancel_meeting": 1,
                   "get_available_rooms": 1})


def instruction(planned: PlannedDay, tier: int, told: str) -> str:
    """The reference's opening: the day's tasks and deadlines, each with its hints up to ``tier``."""
    tasks = "\n\n".join(f"{number}. {task.family} (deadline {task.deadline.isoformat(timespec='minutes')}):\n"
                         f"{task.description}" + (f"\nGuidance: {hint}" if (hint := guidance(task, tier)) else "")
                         for number, task in enumerate(planned.tasks, start=1))
    return (f"You are {AGENT}, a new intern. Today is {planned.start:%A %d %B %Y}; your working day starts at "
            f"{planned.start:%H:%M}. Your workspace is the folder your shell commands run in; the company's shared "
            "files are on the cloud disk. When you do a task for the first time, ask the colleagues it concerns how "
            "it is done before you start. Call done when you have finished.\n\n"
            f"Your tasks:\n\n{tasks}" + (f"\n\n{told}" if told else ""))


LIBRARY = Library(TOOLSET, family, instruction, "workplace", judged=True)




def planned_days(bench: BenchConfig, seed: int, reference: Path, *, paper_day_two: bool) -> list[list[PlannedDay]]:
    """Each scenario's days, generated in order from ``seed`` (under a temporary folder removed when the process
    ends: episodes play copies of it), each day after the first following the one before."""
    root = Path(tempfile.mkdtemp(prefix="traineebench-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    scenarios = [paper_days(scenario, seed) if paper_day_two else scenario for scenario in bench.scenarios]
    days: list[list[PlannedDay]] = []
    for s, scenario in enumerate(scenarios):
        days.append([])
        for d, entry in enumerate(scenario.days):
            built = build_day(root / f"{s}" / f"{d}", scenario.name, entry, seed=seed, reference=reference,
                              where=f"{bench.path}: scenarios[{s}]" + (
                                  " (day 2 drawn by --paper-day-two): " if paper_day_two and d else f".days[{d}]."))
            days[-1].append(PlannedDay(f"{scenario.name}/{entry.name}", scenario.name, tuple(built.tasks),
                                       copied(built.day), built.day.start, CATEGORY, len(built.tasks),
                                       after=days[-1][-1].task_id if days[-1] else ""))
    return days


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
    arms = learning_arms(config, options.learning or bool(options.self_evolution), console)
    chained = [name for name, on in (("--mentor-feedback", options.mentor_feedback), ("--learning", options.learning),
                                     ("--self-evolution", options.self_evolution)) if on]
    if len(chained) > 1:
        raise ConfigError(f"{' and '.join(chained)}: each gives the days after their own arms; choose one")
    path, reference = config_and_reference(options.traineebench_config, options.reference_dir,
                                           download=options.download)
    days = planned_days(load_config(path), config.seed, reference, paper_day_two=options.paper_day_two)
    if options.self_evolution:
        # The first day again and again, each time after the one before: its id says which time.
        days = [[scenario[0], *(replace(scenario[0], task_id=f"{scenario[0].task_id}/evolution_{n}",
                                        after=scenario[0].task_id if n == 1 else
                                        f"{scenario[0].task_id}/evolution_{n - 1}")
                                for n in range(1, options.self_evolution + 1))] for scenario in days]
        arms = ("reflection",)
        if reflection_model(config, arms, console) is None:
            raise ConfigError("--self-evolution reflects on each day: give --reflection-model (or an --agent-model)")
    elif options.mentor_feedback:
        arms = ("notes",)
    provider = provider_for(options.trust_world_code, "--suite traineebench (the agent's shell commands)")
    phases = [[scenario[n] for scenario in days if n < len(scenario)] for n in range(max(map(len, days)))] \
        if arms else [[planned for scenario in days for planned in scenario]]
    if arms and len(phases) == 1:
        raise ConfigError(f"{chained[0]}: {path} has one day per scenario; add --paper-day-two for the paper's "
                          "second day")
    ids = [planned.task_id + (f"-{arm}" if len(arms) > 1 and planned.after else "")
           for phase in phases for planned in phase for arm in (arms if planned.after else ("",))]
    settings = {"sandbox": provider.describe(), "traineebench_config": str(path), "reference_dir": str(reference),
                "colleagues": "npc model" if config.npc_model else "reply rules",
                "judge": "verifier model" if config.verifier_model else "none (judged checks score 0)"}
    return day_plan(config, console, LIBRARY, phases, arms, provider=provider, settings=settings, reference=None,
                    task_set=TaskSet({"task_content": json_digest(
                        [read_file(path).decode("utf-8", "replace"), config.seed, options.paper_day_two,
                         options.mentor_feedback, options.learning, options.self_evolution])}, frozenset(ids)))


def check(options: ValidateOptions, console: Console) -> bool:
    """Every day of the config generates, and no task earns its full points with nothing done. False otherwise."""
    if options.traineebench_config is None:
        raise ConfigError("validate --suite traineebench needs --traineebench-config FILE")
    path, reference = config_and_reference(options.traineebench_config, options.reference_dir, download=False)
    days = [planned for scenario in planned_days(load_config(path), options.seed,
                                                   reference, paper_day_two=False) for planned in scenario]
    families: dict[str, list[Score]] = defaultdict(list)
    for planned in days:
        with tempfile.TemporaryDirectory(prefix="traineebench-check-") as root:
            world = planned.build(Path(root))  # the day as generated is what doing nothing leaves
            for task in planned.tasks:
                families[task.family].append(family(task.family).evaluate(task, Outcome(world.workspace)))
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
    reads=frozenset({"npc", "verifier", "reflection", "guidance"}), options=(TraineeBenchOptions,),
    name=NAME, plan=plan, report_tables=workplace_tables, overview_tables=workplace_overview_tables,
    overview_charts=workplace_overview_charts, validate=check,
    description="Trainee-Bench as its authors run it: their benchmark configs and task families, scored in their "
                "points (needs --traineebench-config, and `occubench data download traineebench` or --reference-dir)")
