"""Twin worlds as a plugin (``--suite twin``): the executable worlds' tasks, played in their simulated twins with the
real instances kept in step, to measure how often the simulator answers differently and how many verdicts that
flips (see :mod:`occubench.twin.suite`)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from occubench.config import RunConfig
from occubench.core.suite import Suite, SuiteDefinition, SuitePlan, content_digest, folder_files, select_tasks, task_set
from occubench.core.verifier import RubricVerifier
from occubench.executable.isolated import IsolatedWorld, sandbox_in_use
from occubench.executable.plugin import WorldsOptions, listed_worlds
from occubench.executable.validate import REFERENCE
from occubench.llm import Model
from occubench.simulated.config import WorldModelRegistry
from occubench.simulated.suite import OccuBenchSuite
from occubench.twin.derive import CONFIG_DIR, write_dataset
from occubench.twin.fidelity import TWIN_SUITE, fidelity_tables
from occubench.twin.suite import TwinSuite, twin_tasks
from occubench.util.paths import user_cache_dir

NAME = TWIN_SUITE


def derived(worlds: list[IsolatedWorld], digest: str) -> Path:
    """The folder of ``worlds``' twins (an OccuBench data folder), derived once per content ``digest``."""
    folder = user_cache_dir() / "twins" / digest[:16]
    if not (folder / CONFIG_DIR).is_dir():
        write_dataset(worlds, folder)  # every file is written whole, so a folder half made is made again
    return folder


def plan(config: RunConfig, console: Console) -> SuitePlan:
    options = WorldsOptions.of(config)
    worlds = listed_worlds(options.worlds_dir, options.trust_world_code, console)
    every = twin_tasks(worlds)
    tasks = select_tasks(every, config, console)
    content = content_digest({name: path for world in worlds
                              for name, path in folder_files(world.directory, f"{world.name}/").items()})
    registry = WorldModelRegistry(derived(worlds, content) / CONFIG_DIR)

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        verifier = models["verifier"]
        simulated = OccuBenchSuite(tasks, registry, models["world"],
                                   RubricVerifier(verifier, num_votes=config.num_votes, context=config.context_window),
                                   fault_rules=fault_rules, context=config.context_window)
        return TwinSuite(worlds, simulated, verifier)
    return SuitePlan(tasks, {"world": config.world_model, "verifier": config.verifier_model or config.world_model},
                     make, world_label=config.world_model, simulated=True, reference=REFERENCE,
                     settings={"sandbox": sandbox_in_use(worlds), "trust_world_code": options.trust_world_code},
                     task_set=task_set(every, {"task_content": content}))


suite = SuiteDefinition(
    name=NAME, plan=plan, report_tables=fidelity_tables,
    description="the executable worlds' simulated twins, each call also made on the real world: how often the "
                "simulator answers differently and how many verdicts that flips (needs --world-model)")
