"""The Inspect tasks ``occubench/occubench``, ``occubench/executable``, ``occubench/awm`` and
``occubench/workplace``.

Each is one of our suites with the settings of ``occubench run`` as task arguments (``-T env_mode=E2``): one sample
per task (id: the task id; metadata: scenario, category, domain, difficulty, world), the :func:`world_agent` solver
and the suite's verifier as scorer. ``epochs`` adds Inspect's pass@k and pass^k reducers (``pass_at_<k>``,
``pass_k_<k>``, k = epochs) to the mean; with ``--epochs`` instead, name them with ``--epochs-reducer``.
``-T worlds=REF`` runs a world package's worlds (:mod:`occubench.hub`), installed and validated first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Scorer

from occubench.config import RunConfig
from occubench.engine.registry import load_suite
from occubench.errors import ConfigError
from occubench.hub.worlds import with_worlds
from occubench.inspect._episodes import Episodes, Role
from occubench.inspect.scorer import day_score, verdict
from occubench.inspect.solver import world_agent
from occubench.util.console import rich_console

#: Settings of the run that the report needs to place an Inspect log beside run directories (the task's metadata).
_RECORDED = ("env_mode", "fault_count", "fault_duration", "with_plan", "seed", "num_votes", "max_steps")


_SELECTION = ("categories", "task_ids", "difficulty", "world")


def _task(suite: str, arguments: dict[str, Any], roles: dict[str, Role], score: Callable[[Episodes], Scorer]) -> Task:
    """The task of ``suite`` from the task function's arguments: ``epochs`` and ``world`` are the task's, the
    others settings of a run."""
    settings = {k: v for k, v in arguments.items() if v is not None}
    epochs, worlds = settings.pop("epochs"), _names(settings.pop("world", None))
    config = with_worlds(RunConfig.create({"suite": suite, **settings}, source="-T"))
    plan = load_suite(suite).plan(config, rich_console(stderr=True))
    tasks = plan.tasks
    if worlds:
        known = sorted({t.env_name for t in tasks})
        if unknown := [name for name in worlds if name not in known]:
            raise ConfigError(f"-T world: no world {', '.join(unknown)}; choose from {', '.join(known)}")
        tasks = [t for t in tasks if t.env_name in worlds]
    if not tasks:
        chosen = " -T ".join(f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}"
                             for k, v in arguments.items() if v is not None and k in _SELECTION)
        raise ConfigError(f"no {suite} task matches -T {chosen}: each of them narrows the selection")
    episodes = Episodes(config, plan, roles)
    samples = [Sample(id=t.task_id, input=t.instruction,
                      metadata={"scenario": t.scenario, "category": t.category, "domain": t.domain,
                                "difficulty": t.difficulty, "world": t.env_name}) for t in tasks]
    reducers = ["mean", *([f"pass_at_{epochs}", f"pass_k_{epochs}"] if epochs > 1 else [])]
    recorded = config.model_dump(include=set(_RECORDED))
    return Task(dataset=MemoryDataset(samples, name=f"occubench-{suite}"), solver=world_agent(episodes),
                scorer=score(episodes), epochs=Epochs(epochs, reducers),
                metadata={"suite": suite, "fault_mode": episodes.injection, **recorded,
                          # which of the suite's roles stands in for another: the log's reader needs no suite's name
                          "fallbacks": {role: r.fallback for role, r in roles.items() if r.fallback}})


def _names(value: str | list[str] | None) -> list[str] | None:
    # -T world=a,b arrives as one string; -T world=[a,b] (YAML) as a list.
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


@task
def occubench(env_mode: str = "E0", fault_count: int = 2, fault_duration: int = 2, fault_mode: str | None = None,
              categories: str | list[str] | None = None, task_ids: str | list[str] | int | None = None,
              difficulty: str | list[int] | int | None = None, with_plan: bool = False, data_dir: str | None = None,
              num_votes: int = 3, max_steps: int = 50, seed: int = 0, date: str | None = None,
              worlds: str | None = None, epochs: int = 1) -> Task:
    """The OccuBench benchmark: worlds simulated by the ``world`` model role, judged by the ``grader`` role (the
    world model when not given) by majority vote."""
    return _task("occubench", locals(), {"world": Role("world", required=True),
                                         "verifier": Role("grader", fallback="world")}, verdict)


@task
def executable(world: str | list[str] | None = None, task_ids: str | list[str] | None = None,
               categories: str | list[str] | None = None, difficulty: str | list[int] | int | None = None,
               env_mode: str = "E0", fault_count: int = 2, fault_duration: int = 2, worlds_dir: str | None = None,
               trust_world_code: bool = False, num_votes: int = 3, max_steps: int = 50, seed: int = 0,
               date: str | None = None, worlds: str | None = None, epochs: int = 1) -> Task:
    """Executable worlds (SQLite, tools that are code), checked by code; with a ``grader`` model role, a judge
    also labels each episode (complete, incomplete, agent_error, environment_error). ``worlds_dir`` worlds run in
    the sandbox, or without one only with ``trust_world_code``."""
    return _task("executable", locals(), {"verifier": Role("grader")}, verdict)


@task
def awm(data_dir: str | None = None, task_ids: str | list[str] | None = None, env_mode: str = "E0",
        fault_count: int = 2, fault_duration: int = 2, trust_world_code: bool = False, num_votes: int = 3,
        max_steps: int = 50, seed: int = 0, date: str | None = None, worlds: str | None = None,
        epochs: int = 1) -> Task:
    """An AWM-format set (``data_dir``, else the copy ``occubench data download awm`` made): its applications in the
    sandbox, each task verified by its published code or, where that needs one, by the ``grader`` model role."""
    return _task("awm", locals(), {"verifier": Role("grader")}, verdict)


@task
def workplace(days: int = 10, seed: int = 0, workplace_dir: str | None = None, task_ids: str | list[str] | None = None,
              max_steps: int = 50, date: str | None = None, worlds: str | None = None, epochs: int = 1) -> Task:
    """Generated working days, scored by their checkpoints; colleagues are played by the ``colleague`` model role
    when given, else answer from their scripted clues."""
    return _task("workplace", locals(), {"npc": Role("colleague")}, day_score)
