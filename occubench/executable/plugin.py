"""The executable worlds as a plugin: SQLite worlds whose tools are code, checked by code."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from occubench.config import RunConfig
from occubench.core.options import SuiteOptions
from occubench.core.suite import (
    Suite,
    SuiteDefinition,
    SuitePlan,
    ValidateOptions,
    content_digest,
    folder_files,
    select_tasks,
    task_set,
)
from occubench.core.tables import Table
from occubench.core.verifier import LabelJudge
from occubench.executable.isolated import IsolatedWorld, sandbox_in_use
from occubench.executable.registry import worlds_of
from occubench.executable.suite import ExecutableSuite
from occubench.executable.validate import REFERENCE, validate
from occubench.llm import Model
from occubench.sandbox import TRUST_FLAG
from occubench.util.console import rich_console
from occubench.util.text import markup

NAME = "executable"


def listed_worlds(worlds_dir: str | None, trust: bool, console: Console | None = None) -> list[IsolatedWorld]:
    """The worlds of ``worlds_dir`` (or the built-in ones), warning on ``console`` when ``trust`` is given."""
    console = console or rich_console(stderr=True)
    if trust:
        console.print(f"[yellow]warning: {TRUST_FLAG}: where no sandbox is available, world code from outside "
                      "occubench runs as a plain process that can read your files and keys[/yellow]")
    return worlds_of(worlds_dir, trust)


class WorldsOptions(SuiteOptions):
    #: The world folders to run instead of the built-in ones.
    worlds_dir: str | None = None
    #: Where no sandbox is available, run outside worlds' code as a plain process all the same.
    trust_world_code: bool = False


def plan(config: RunConfig, console: Console) -> SuitePlan:
    options = WorldsOptions.of(config)
    worlds = listed_worlds(options.worlds_dir, options.trust_world_code, console)
    every = ExecutableSuite(worlds).tasks()
    tasks = select_tasks(every, config, console)
    # The run's identity is its worlds' code and data (every file of each world folder), not where they are.
    content = content_digest({name: path for world in worlds
                              for name, path in folder_files(world.directory, f"{world.name}/").items()})

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        judge = models.get("verifier")
        return ExecutableSuite(worlds, LabelJudge(judge, num_votes=config.num_votes, context=config.context_window)
                               if judge else None)
    return SuitePlan(tasks, {"verifier": config.verifier_model} if config.verifier_model else {}, make,
                     world_label=None, simulated=False, reference=REFERENCE,
                     settings={"sandbox": sandbox_in_use(worlds), "trust_world_code": options.trust_world_code},
                     task_set=task_set(every, {"task_content": content}))


def listing(worlds_dir: str | None = None, trust: bool = False) -> tuple[list[Table], Any]:
    """The built-in worlds, or those in ``worlds_dir``."""
    worlds = listed_worlds(worlds_dir, trust)
    data = [{"name": w.name, "scenario": w.scenario, "category": w.category, "domain": w.domain,
             "tools": len(w.tools), "tasks": len(w.tasks)} for w in worlds]
    table = Table(f"Suite {NAME}: executable worlds (run with --suite {NAME})",
                  ["Environment", "Category", "Domain", "Tools", "Tasks"],
                  [[w.name, w.category, w.domain, str(len(w.tools)), str(len(w.tasks))] for w in worlds],
                  text_columns=3)
    return [table], data


def check(options: ValidateOptions, console: Console) -> bool:
    world_problems, results = validate(listed_worlds(options.worlds_dir, options.trust_world_code, console))
    rows = []
    for r in results:  # table cells are plain text (see Table.__rich_console__)
        failed = [what for what, bad in (("the reference solution fails", not r.reference),
                                           ("doing nothing passes", r.noop), ("the wrong solution passes", r.wrong))
                  if bad]
        rows.append([str(r.task.task_id), str(r.task.difficulty), "; ".join(failed + r.problems) or "valid"])
    table = Table("Reference solution must pass; doing nothing and the wrong solution must fail",
                  ["Task", "Difficulty", "Verdict"], rows, text_columns=3, optional=("Difficulty",))
    console.print(table)
    bad_worlds = {name: problems for name, problems in world_problems.items() if problems}
    for name, problems in bad_worlds.items():
        console.print(f"[red]{markup(name, newlines=False)}: {markup('; '.join(problems), newlines=False)}[/red]")
    good = sum(result.ok for result in results)
    console.print(f"{good}/{len(results)} tasks valid (reference 100 %, do-nothing 0 %, wrong solution 0 %) in "
                  f"{len(world_problems)} environments")
    return good == len(results) and not bad_worlds


suite = SuiteDefinition(
    reads=frozenset({"verifier"}), options=(WorldsOptions,),
    name=NAME, plan=plan, listing=listing, validate=check,
    description="executable worlds: SQLite environments whose tools are code and whose tasks are checked by code "
                "(offline with --agent reference)")
