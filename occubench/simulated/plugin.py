"""The OccuBench benchmark as a plugin: LLM-simulated worlds from the published data, judged by rubric votes."""

from __future__ import annotations

from dataclasses import asdict

from rich.console import Console

from occubench.config import RunConfig
from occubench.core.options import SuiteOptions
from occubench.core.results import Result
from occubench.core.suite import (
    Suite,
    SuiteDefinition,
    SuitePlan,
    content_digest,
    select_tasks,
    task_set,
)
from occubench.core.verifier import RubricVerifier
from occubench.llm import Model
from occubench.simulated.config import WorldModelRegistry
from occubench.simulated.data import ensure_data, resolve_data_paths
from occubench.simulated.suite import OccuBenchSuite
from occubench.simulated.tasks import load_tasks

NAME = "occubench"


class BenchmarkData(SuiteOptions):
    """Where the benchmark's data is (``--data-dir``, or each file on its own), and whether to download it."""

    data_dir: str | None = None
    eval_data: str | None = None
    scenario_pool: str | None = None
    config_dir: str | None = None
    download: bool = False


def plan(config: RunConfig, console: Console) -> SuitePlan:
    data = BenchmarkData.of(config)
    paths = ensure_data(resolve_data_paths(data_dir=data.data_dir, eval_data=data.eval_data,
                                           scenario_pool=data.scenario_pool, config_dir=data.config_dir),
                        download=data.download)
    every = load_tasks(paths.eval_data, paths.scenario_pool)
    tasks = select_tasks(every, config, console)
    # The run's identity is what its tasks are made of: the two data files and the world config of every task.
    configs = {f"configs/{env}.json": path for env in {task.env_name for task in every}
               if (path := paths.config_dir / f"{env}.json").is_file()}
    content = content_digest({"eval_data": paths.eval_data, "scenario_pool": paths.scenario_pool, **configs})
    registry = WorldModelRegistry(paths.config_dir)
    for env_name in sorted({task.env_name for task in tasks}):
        registry.get(env_name)  # every config the run needs is checked before any money is spent

    def make(models: dict[str, Model], fault_rules: str | None) -> Suite:
        return OccuBenchSuite(tasks, registry, models["world"],
                              RubricVerifier(models["verifier"], num_votes=config.num_votes,
                                             context=config.context_window),
                              fault_rules=fault_rules, context=config.context_window)
    return SuitePlan(tasks, {"world": config.world_model, "verifier": config.verifier_model or config.world_model},
                     make, world_label=config.world_model, simulated=True,
                     settings={"data_paths": {k: str(v) for k, v in asdict(paths).items()}},
                     task_set=task_set(every, {"task_content": content}))


def _claims(result: Result) -> bool:
    """The original OccuBench harness writes no suite: a line of it is the benchmark's, and names its simulator."""
    return result.world_model is not None


suite = SuiteDefinition(
    reads=frozenset({"world", "verifier"}), options=(BenchmarkData,),
    name=NAME, plan=plan, claims=_claims,
    description="the OccuBench benchmark: 382 tasks in LLM-simulated worlds from 100 professional scenarios "
                "(the default of `occubench run`; needs --world-model)")
