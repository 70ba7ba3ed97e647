"""Calibration: each candidate task run K times with its plan and K times without it, by every calibration agent,
through ``occubench.run`` itself (the simulator, the majority-vote judge, faults off), then classified."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from occubench.config import RunConfig
from occubench.core.results import Result
from occubench.engine.identity import default_run_name
from occubench.engine.run import run
from occubench.report.stats import Count
from occubench.synth.simulated.candidate import Calibration, Candidate
from occubench.synth.simulated.config import SimulatedSynthConfig
from occubench.util.jsonl import write_atomic
from occubench.util.jsonsafe import dumps

if TYPE_CHECKING:
    from occubench.synth.session import Session

_SHARED = ("api_key", "base_url", "agent_api_key", "agent_base_url", "world_api_key", "world_base_url",
           "verifier_api_key", "verifier_base_url", "agent_params", "world_params", "verifier_params", "max_steps",
           "num_votes", "date", "max_concurrency", "request_timeout", "retry_budget", "max_connections",
           "fixed_concurrency", "cache", "replay", "debug")


def env_name(environment: dict[str, Any]) -> str:
    """The published data's naming: ``env_`` and 12 hex digits, here of the configuration's content."""
    return "env_" + hashlib.sha256(dumps(environment, sort_keys=True).encode()).hexdigest()[:12]


def calibration_id(candidate: Candidate) -> str:
    """A task id that changes with the artifacts, so a repaired task is run again, never read from old results."""
    digest = hashlib.sha256(dumps([candidate.environment, candidate.task], sort_keys=True).encode()).hexdigest()
    return f"{candidate.number}-{digest[:10]}"


def write_data(folder: Path, rows: Iterable[tuple[Candidate, dict[str, Any]]], *, plans: bool) -> None:
    """``rows`` (candidate, task line) as an OccuBench data folder; with ``plans``, lines carry the solution plan."""
    configs = folder / "world_model_configs"
    configs.mkdir(parents=True, exist_ok=True)
    tasks, scenarios = [], {}
    for candidate, line in rows:
        name = env_name(candidate.environment)
        (configs / f"{name}.json").write_text(dumps({"environment_name": name, **candidate.environment}, indent=2),
                                              encoding="utf-8")
        # Keys in the published data's order.
        tasks.append({key: line[key] for key in ("task_id", "difficulty_level", "task_scenario_name",
                                                 "agent_instruction")}
                     | {"env_name": name, "verification_plan": line["verification_plan"]}
                     | ({"solution_plan": candidate.task["solution_plan"]} if plans else {}))
        scenarios[candidate.scenario.name] = candidate.scenario.line()
    _write_lines(folder / "eval_benchmark_solvable.jsonl", tasks)
    _write_lines(folder / "task_scenario_all_pool.jsonl", list(scenarios.values()))


def _write_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    write_atomic(path, "".join(dumps(line) + "\n" for line in lines))


def calibrate(session: Session, config: SimulatedSynthConfig, candidates: list[Candidate], round_: int) -> None:
    """Run every candidate ``config.runs`` times per agent, with and without its plan; fills ``calibrations``."""
    folder = session.work / "calibration"
    data = folder / f"round{round_}"
    ids = {calibration_id(c): c for c in candidates}
    write_data(data, ((c, _task_line(c, task_id)) for task_id, c in ids.items()), plans=True)
    outcome = {task_id: Calibration() for task_id in ids}
    for agent in config.agent_model:
        for with_plan in (True, False):
            run_config = RunConfig.create({
                **{key: getattr(config, key) for key in _SHARED}, "suite": "occubench", "agent_model": agent,
                "world_model": config.world_model, "verifier_model": config.verifier_model, "data_dir": str(data),
                "with_plan": with_plan, "trials": config.runs, "output_dir": str(folder), "skip_preflight": True,
                # One run directory per round: each round's candidates are another task set.
                "run_name": default_run_name(agent, "with_plan" if with_plan else "without_plan", "E0", 0, 0) +
                f"__round{round_ + 1}"})
            session.console.print(f"Calibration round {round_ + 1}: {agent}, {'with' if with_plan else 'without'} "
                                  f"the plan")
            for result in run(run_config, console=session.console).results:
                if result.task_id in outcome:
                    _count(outcome[str(result.task_id)], agent, with_plan, result)
    for task_id, candidate in ids.items():
        candidate.calibrations.append(outcome[task_id])


def _task_line(candidate: Candidate, task_id: str) -> dict[str, Any]:
    return {"task_id": task_id, "difficulty_level": candidate.task["difficulty_level"],
            "task_scenario_name": candidate.scenario.name, "agent_instruction": candidate.task["agent_instruction"],
            "verification_plan": candidate.task["verification_plan"]}


def _count(calibration: Calibration, agent: str, with_plan: bool, result: Result) -> None:
    rate = (calibration.with_plan if with_plan else calibration.without_plan).setdefault(agent, Count())
    if not result.ok:
        rate.errors += 1
        return
    rate.evaluated += 1
    rate.passed += result.passed
    if with_plan and not result.passed and len(calibration.failures) < 3:
        calibration.failures.append({"agent": agent, "trajectory": result.trajectory[-6000:],
                                     "judge_feedback": [vote.feedback[:1000] for vote in result.votes]})

