"""Twin worlds as a plugin (``--suite twin``): executable worlds' tasks, played in their simulated twins with the
real instances kept in step, to measure how often the simulator answers differently and how many verdicts that
flips (see :mod:`occubench.twin.suite`). ``--twin-of`` says which worlds: ``executable`` (the default: the built-in
world folders, or those of ``--worlds-dir``) or ``awm`` (the AWM-format set of ``--data-dir``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rich.console import Console

from occubench.awm.plugin import AwmOptions, planned_worlds
from occubench.awm.suite import AwmSuite
from occubench.config import RunConfig
from occubench.core.agent import Agent
from occubench.core.suite import Suite, SuiteDefinition, SuitePlan, content_digest, folder_files, select_tasks, task_set
from occubench.core.task import Task
from occubench.core.verifier import RubricVerifier
from occubench.executable.isolated import sandbox_in_use
from occubench.executable.plugin import WorldsOptions, listed_worlds
from occubench.executable.suite import ExecutableSuite
from occubench.executable.validate import REFERENCE
from occubench.llm import Model
from occubench.simulated.config import WorldModelRegistry
from occubench.simulated.suite import OccuBenchSuite
from occubench.twin.awm import awm_facts, awm_twin_tasks
from occubench.twin.derive import CONFIG_DIR, SCENARIOS_FILE, WorldFacts, facts_of, write_dataset
from occubench.twin.fidelity import TWIN_SUITE, fidelity_tables
from occubench.twin.suite import TwinSuite, twin_tasks
from occubench.util.paths import user_cache_dir
from occubench.util.text import markup

NAME = TWIN_SUITE


class TwinOptions(WorldsOptions):
    #: The kind of executable worlds whose twins run.
    twin_of: Literal["executable", "awm"] = "executable"


@dataclass(frozen=True)
class RealWorlds:
    """The real worlds of a twin run, whatever their kind."""

    #: Their tasks, each with its twin's verification plan.
    tasks: list[Task]
    #: What they are made of, for the run's identity and the derived twins' folder.
    content: str
    #: What their twins are derived from (called only when they are not derived yet: it may start workers).
    facts: Callable[[], list[WorldFacts]]
    #: Their own suite, given the run's rubric judge: it opens the real instances and gives the real verdict.
    suite: Callable[[RubricVerifier], Suite]
    settings: dict[str, Any]
    reference: Agent | None = None


def derived(real: RealWorlds) -> Path:
    """The folder of the twins of ``real``'s worlds (an OccuBench data folder), derived once per content."""
    folder = user_cache_dir() / "twins" / real.content[:16]
    if not (folder / SCENARIOS_FILE).is_file():  # written last, and every file whole: the folder is complete
        write_dataset(real.facts(), real.tasks, folder)
    return folder


def executable_worlds(options: TwinOptions, console: Console) -> RealWorlds:
    worlds = listed_worlds(options.worlds_dir, options.trust_world_code, console)
    content = content_digest({name: path for world in worlds
                              for name, path in folder_files(world.directory, f"{world.name}/").items()})
    return RealWorlds(twin_tasks(worlds), content, lambda: [facts_of(world.described) for world in worlds],
                      lambda judge: ExecutableSuite(worlds),
                      {"sandbox": sandbox_in_use(worlds), "trust_world_code": options.trust_world_code}, REFERENCE)


def awm_worlds(config: RunConfig, console: Console) -> RealWorlds:
    options = AwmOptions.of(config)
    worlds, provider, awm = planned_worlds(options, console)

    def facts() -> list[WorldFacts]:
        found = [awm_facts(world) for world in worlds]
        for world in worlds:
            if world.problems:  # known once a worker loaded the world
                console.print(f"[yellow]warning: {markup(world.name)}: {len(world.problems)} seed statement(s) left "
                              f"out of its database (and its twin's); the first: {markup(world.problems[0])}[/yellow]")
        return found
    return RealWorlds(awm_twin_tasks(worlds), awm.digest, facts, lambda judge: AwmSuite(worlds, judge),
                      {"sandbox": provider.describe(), "trust_world_code": options.trust_world_code})


def plan(config: RunConfig, console: Console) -> SuitePlan:
    options = TwinOptions.of(config)
    real = awm_worlds(config, console) if options.twin_of == "awm" else executable_worlds(options, console)
    tasks = select_tasks(real.tasks, config, console)
    registry = WorldModelRegistry(derived(real) / CONFIG_DIR)

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        verifier = models["verifier"]
        judge = RubricVerifier(verifier, num_votes=config.num_votes, context=config.context_window)
        simulated = OccuBenchSuite(tasks, registry, models["world"], judge, fault_rules=fault_rules,
                                   context=config.context_window)
        return TwinSuite(real.suite(judge), simulated, verifier)
    return SuitePlan(tasks, {"world": config.world_model, "verifier": config.verifier_model or config.world_model},
                     make, world_label=config.world_model, simulated=True, reference=real.reference,
                     settings={**real.settings, "twin_of": options.twin_of},
                     task_set=task_set(real.tasks, {"task_content": real.content}))


suite = SuiteDefinition(
    reads=frozenset({"world", "verifier"}), options=(TwinOptions, AwmOptions),
    name=NAME, plan=plan, report_tables=fidelity_tables,
    description="executable worlds' simulated twins, each call also made on the real world: how often the "
                "simulator answers differently and how many verdicts that flips (needs --world-model; --twin-of awm "
                "--data-dir DIR for an AWM-format set's)")
