"""AWM-format sets as a plugin (``--suite awm --data-dir DIR``): a world per runnable scenario, run only in the
sandbox worker (or, with ``--trust-world-code`` where there is no sandbox, a plain child process)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from occubench.awm.data import AwmSet, Scenario, load_set
from occubench.awm.folders import write_scenario
from occubench.awm.suite import AwmSuite
from occubench.awm.world import AwmWorld
from occubench.config import RunConfig
from occubench.core.options import SuiteOptions
from occubench.core.suite import Suite, SuiteDefinition, SuitePlan, select_tasks, task_set
from occubench.core.verifier import RubricVerifier
from occubench.errors import ConfigError
from occubench.executable.isolated import provider_for
from occubench.llm import Model
from occubench.sandbox.boundary import NAME as PLAIN_NAME
from occubench.sandbox.provider import Provider
from occubench.simulated.data import user_cache_dir
from occubench.util.jsonl import json_digest
from occubench.util.text import markup

NAME = "awm"


class AwmOptions(SuiteOptions):
    #: The folder of the set's JSON Lines files.
    data_dir: str | None = None
    #: Where no sandbox is available, run the applications as a plain process all the same.
    trust_world_code: bool = False


def scenario_digest(scenario: Scenario) -> str:
    """What a world is made of: its application, schema, seed rows and verifiers (not its name or task texts)."""
    return json_digest([scenario.app, scenario.schema, scenario.seed, sorted(scenario.verifiers.items()),
                        sorted(scenario.pure_verifiers.items())])


def runnable_worlds(awm: AwmSet, provider: Provider, console: Console) -> list[AwmWorld]:
    """The set's runnable scenarios, each written once to the cache (by content) for workers of ``provider`` to
    read; the others are named on ``console`` with what they lack."""
    worlds = []
    for scenario in awm.scenarios.values():
        if not scenario.runnable or PLAIN_NAME.fullmatch(scenario.name) is None:
            reason = "; ".join(scenario.defects()) or "its name is not a plain name"
            console.print(f"[yellow]{markup(scenario.name, newlines=False)}: not run ({markup(reason)})[/yellow]")
            continue
        folder = user_cache_dir() / "awm" / scenario_digest(scenario)[:16] / scenario.name
        if not (folder / "verifiers.json").is_file():  # written last: a folder without it is incomplete
            write_scenario(scenario, folder)
        worlds.append(AwmWorld(scenario, folder, provider))
    return worlds


def plan(config: RunConfig, console: Console) -> SuitePlan:
    options = AwmOptions.of(config)
    if options.data_dir is None:
        raise ConfigError("--suite awm needs --data-dir: the folder of an AWM-format set (gen_*.jsonl)")
    awm = load_set(Path(options.data_dir))
    for problem in awm.problems:
        console.print(f"[yellow]warning: {markup(problem)}[/yellow]")
    provider = provider_for(options.trust_world_code, f"--data-dir {awm.root}")
    worlds = runnable_worlds(awm, provider, console)
    every = AwmSuite(worlds).tasks()
    tasks = select_tasks(every, config, console)
    content = json_digest({world.name: [scenario_digest(world.scenario), world.scenario.tasks] for world in worlds})

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        judge = models.get("verifier")
        return AwmSuite(worlds, RubricVerifier(judge, num_votes=config.num_votes, context=config.context_window)
                        if judge else None)
    return SuitePlan(tasks, {"verifier": config.verifier_model} if config.verifier_model else {}, make,
                     world_label=None, simulated=False,
                     settings={"sandbox": provider.describe(),
                               "trust_world_code": options.trust_world_code},
                     task_set=task_set(every, {"task_content": content}))


suite = SuiteDefinition(
    name=NAME, plan=plan,
    description="AWM-format worlds (AgentWorldModel-1K): FastAPI + SQLite applications run in the sandbox, "
                "verified by their published code or a judge (needs --data-dir and the awm extra)")
