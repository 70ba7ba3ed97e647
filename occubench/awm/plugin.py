"""AWM-format sets as a plugin (``--suite awm --data-dir DIR``, or without ``--data-dir`` the copy ``occubench data
download awm`` made): a world per runnable scenario, run only in the sandbox worker (or, with
``--trust-world-code`` where there is no sandbox, a plain child process)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from occubench.awm.data import AwmSet, Scenario, load_set
from occubench.awm.folders import publish_scenario
from occubench.awm.hub import set_folder
from occubench.awm.suite import AwmSuite
from occubench.awm.world import LOAD_SECONDS, PRELOAD, SERVICE, AwmWorld
from occubench.config import RunConfig
from occubench.core.options import SuiteOptions
from occubench.core.suite import Suite, SuiteDefinition, SuitePlan, ValidateOptions, select_tasks, task_set
from occubench.core.tables import Table
from occubench.core.verifier import RubricVerifier
from occubench.errors import WorldError
from occubench.llm import Model
from occubench.sandbox.boundary import NAME as PLAIN_NAME
from occubench.sandbox.boundary import problem as boundary_problem
from occubench.sandbox.forking import forking
from occubench.sandbox.pool import WorkerFailed, pool
from occubench.sandbox.provider import Provider, provider_for
from occubench.util.console import rich_console
from occubench.util.jsonl import json_digest
from occubench.util.paths import user_cache_dir
from occubench.util.text import markup

NAME = "awm"


class AwmOptions(SuiteOptions):
    #: The folder of the set's JSON Lines files (None: the downloaded copy).
    data_dir: str | None = None
    #: Where no sandbox is available, run the applications as a plain process all the same.
    trust_world_code: bool = False


def scenario_digest(scenario: Scenario) -> str:
    """What a world is made of: its application, schema, seed rows and verifiers (not its name or task texts)."""
    return json_digest([scenario.app, scenario.schema, scenario.seed, sorted(scenario.verifiers.items()),
                        sorted(scenario.pure_verifiers.items())])


def worker_provider(provider: Provider) -> Provider:
    """Workers of ``provider`` for AWM scenarios: forked, where the kernel allows, from one zygote that has imported
    what every application imports, and that sees every scenario folder of the cache."""
    root = user_cache_dir() / "awm"
    root.mkdir(parents=True, exist_ok=True)
    return forking(provider, root, PRELOAD)


def runnable_worlds(awm: AwmSet, provider: Provider, console: Console) -> list[AwmWorld]:
    """The set's runnable scenarios, each written once to the cache (by content) for workers of ``provider`` to
    read; the others are named on ``console`` with what they lack."""
    provider = worker_provider(provider)
    worlds = []
    for scenario in awm.scenarios.values():
        if not scenario.runnable or PLAIN_NAME.fullmatch(scenario.name) is None:
            reason = "; ".join(scenario.defects()) or "its name is not a plain name"
            console.print(f"[yellow]{markup(scenario.name, newlines=False)}: not run ({markup(reason)})[/yellow]")
            continue
        folder = publish_scenario(scenario, user_cache_dir() / "awm" / scenario_digest(scenario)[:16] / scenario.name)
        worlds.append(AwmWorld(scenario, folder, provider))
    return worlds


def planned_worlds(options: AwmOptions, console: Console) -> tuple[list[AwmWorld], Provider, AwmSet]:
    """The runnable worlds of the set ``options`` name (``--data-dir``, else the downloaded copy), the provider that
    runs them and the set; the set's problems are warned of on ``console``."""
    awm = load_set(set_folder(options.data_dir))
    for problem in awm.problems:
        console.print(f"[yellow]warning: {markup(problem)}[/yellow]")
    provider = provider_for(options.trust_world_code, f"--data-dir {awm.root}")
    return runnable_worlds(awm, provider, console), provider, awm


def plan(config: RunConfig, console: Console) -> SuitePlan:
    options = AwmOptions.of(config)
    worlds, provider, awm = planned_worlds(options, console)
    every = AwmSuite(worlds).tasks()
    tasks = select_tasks(every, config, console)

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        judge = models.get("verifier")
        return AwmSuite(worlds, RubricVerifier(judge, num_votes=config.num_votes, context=config.context_window)
                        if judge else None)
    return SuitePlan(tasks, {"verifier": config.verifier_model} if config.verifier_model else {}, make,
                     world_label=None, simulated=False,
                     settings={"sandbox": provider.describe(), "trust_world_code": options.trust_world_code,
                               "data_dir": str(awm.root)},
                     # The run's identity is the content of the files it read, not where they are.
                     task_set=task_set(every, {"task_content": awm.digest}))


def check(options: ValidateOptions, console: Console) -> bool:
    """Every scenario's parts and defects; for each runnable one, in its worker: the application loads, its tools
    are listed, and each verifier compiles and returns on the initial database. Data defects are reported; only a
    runnable scenario whose application does not load makes the validation fail."""
    awm = load_set(set_folder(options.data_dir))
    provider = provider_for(options.trust_world_code, f"--data-dir {awm.root}")
    worlds = {world.name: world for world in runnable_worlds(awm, provider, rich_console(quiet=True))}
    rows, failed = [], []
    for scenario in awm.scenarios.values():
        tools, notes = "-", list(scenario.defects())
        if (world := worlds.get(scenario.name)) is not None:
            try:
                tools, broken = checked_in_worker(world)
                notes += broken + [f"seed: {problem}" for problem in world.problems]
            except WorldError as exc:
                failed.append(scenario.name)
                notes.append(f"does not load: {exc}")
        elif scenario.verifiers or scenario.pure_verifiers:
            notes += _compiled(scenario, provider)
        rows.append([scenario.name, "yes" if scenario.runnable else "no", str(len(scenario.tasks)), tools,
                     str(len(scenario.pure_verifiers)), str(len(scenario.verifiers)), "; ".join(notes) or "complete"])
    table = Table(f"AWM-format set {awm.root}", ["Scenario", "Runnable", "Tasks", "Tools", "Pure verifiers",
                                                 "Code-augmented verifiers", "Defects"], rows, text_columns=7,
                  optional=("Code-augmented verifiers", "Pure verifiers", "Tools", "Tasks"))
    console.print(table)
    for problem in awm.problems:
        console.print(f"[yellow]{markup(problem)}[/yellow]")
    console.print(f"{len(worlds) - len(failed)}/{len(awm.scenarios)} scenarios run"
                  + (f"; {len(failed)} runnable ones do not load: {', '.join(failed)}" if failed else ""))
    return not failed


def _problems(rows: list[dict[str, Any]]) -> list[str]:
    return [f"{row['mode'].replace('_', '-')} verifier of task {row['task']}: {row['problem']}"
            for row in rows if row["problem"]]


def _compiled(scenario: Scenario, provider: Provider) -> list[str]:
    """Whether the verifiers of a scenario that cannot run compile, asked of a worker with no scenario loaded."""
    empty = user_cache_dir() / "awm" / "empty"
    empty.mkdir(parents=True, exist_ok=True)
    codes = {"pure": scenario.pure_verifiers, "code_augmented": scenario.verifiers}
    workers = pool(worker_provider(provider), SERVICE, [empty])
    worker = workers.lease()
    try:
        reply = worker.request("compile", {"verifiers": {mode: {str(k): v for k, v in found.items()}
                                                         for mode, found in codes.items()}}, LOAD_SECONDS)
    except WorkerFailed as exc:
        return [f"its verifiers could not be compiled: {exc.kind}: {exc}"]
    finally:
        workers.release(worker)
    if (problem := boundary_problem("awm_check", reply)) is not None:
        return [f"the worker's reply is refused: {problem}"]
    return _problems(reply)


def checked_in_worker(world: AwmWorld) -> tuple[str, list[str]]:
    """The world's tool count and its verifiers' problems, from one of its workers."""
    environment = world.environment()
    try:
        checked = environment.request("check", {}, LOAD_SECONDS, "checking the verifiers")
    finally:
        environment.close()
    return str(len(environment.tools())), _problems(checked)


suite = SuiteDefinition(
    reads=frozenset({"verifier"}), options=(AwmOptions,),
    name=NAME, plan=plan, validate=check,
    description="AWM-format worlds (AgentWorldModel-1K): FastAPI + SQLite applications run in the sandbox, "
                "verified by their published code or a judge (needs the awm extra, and --data-dir or "
                "`occubench data download awm`)")
