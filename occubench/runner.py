"""Running tasks: Task → Environment ↔ Agent → Trajectory → Verifier → result record → store.

Failures that are not the agent's (the endpoint stayed down, the simulator or the judge gave nothing usable)
make a record with ``status: "error"``: it is left out of the completion rate and retried by the next run.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from occubench._log import current_task
from occubench.llm.cache import current_trial
from occubench.agent import Agent
from occubench.environment import Environment
from occubench.errors import LLMRequestError, LLMUnavailableError, VerifierError, WorldError
from occubench.llm import CacheMissError
from occubench.llm import Usage
from occubench.store import Record, ResultStore, is_ok, latest_by_task
from occubench.suite import Suite
from occubench.task import Task
from occubench.trajectory import Trajectory

log = logging.getLogger("occubench")

#: The OccuBench README's fields in its order, then ours; anything else a run adds follows.
RESULT_FIELDS = (
    "task_id", "task_scenario_name", "category", "domain", "difficulty_level", "agent_model", "world_model",
    "env_mode", "fault_count", "fault_duration", "with_plan", "is_correct", "feedback", "step_count", "trajectory",
    "status", "votes", "usage", "duration_s", "error", "trial",
)

_ERROR_KINDS: tuple[tuple[type[Exception], str], ...] = (
    (LLMUnavailableError, "infrastructure"),
    (CacheMissError, "cache_miss"),
    (LLMRequestError, "request_rejected"),
    (WorldError, "environment"),
    (VerifierError, "verifier"),
)


def _error_kind(exc: Exception) -> str:
    return next((kind for cls, kind in _ERROR_KINDS if isinstance(exc, cls)), "internal")


#: Wraps a task's fresh environment (fault injection, say) before the agent sees it.
EnvWrapper = Callable[[Environment, Task], Environment]


def evaluate_task(suite: Suite, agent: Agent, task: Task, run_fields: dict[str, Any],
                  wrap: EnvWrapper | None = None, trial: int = 0) -> Record:
    """One episode (trial ``trial`` of ``task``) and its verdict, as a result record. Never raises for a failure
    inside the episode."""
    started = time.monotonic()
    current_task.set(task.task_id if trial == 0 else f"{task.task_id}#{trial}")
    current_trial.set(trial)
    trajectory = Trajectory()
    record: Record = {
        "task_id": task.task_id, "task_scenario_name": task.scenario, "category": task.category,
        "domain": task.domain, "difficulty_level": task.difficulty, **run_fields,
        "is_correct": None, "feedback": "", "step_count": 0, "trajectory": "",
        "status": "ok", "votes": [], "usage": {}, "duration_s": 0.0, "error": None, "trial": trial,
        "fault_events": [],
    }
    usage: dict[str, Usage] = {"agent": trajectory.usage}
    env = suite.make_env(task)
    if wrap:
        env = wrap(env, task)
    try:
        agent.run(task, env, trajectory)
        verdict = suite.verify(task, trajectory, env)
        usage["verifier"] = verdict.usage
        record.update(is_correct=verdict.is_correct, feedback=verdict.feedback, votes=verdict.votes_json(),
                      **verdict.extra)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a recorded, retryable error
        kind = _error_kind(exc)
        if kind == "internal":
            log.error("task %s failed inside occubench:\n%s", task.task_id, traceback.format_exc())
        record.update(status="error", error={"kind": kind, "message": str(exc)},
                      votes=getattr(exc, "votes", []))
    finally:
        usage.update(env.usage)
        record.update(env.info())
        env.close()
    record.update(
        step_count=trajectory.step_count, trajectory=trajectory.render(), final_answer=trajectory.final_answer,
        stop_reason=trajectory.stop_reason, steps=trajectory.to_steps_json(),
        usage={role: u.to_dict() for role, u in usage.items()},
        duration_s=round(time.monotonic() - started, 3),
    )
    return {**{key: record.pop(key) for key in RESULT_FIELDS if key in record}, **record}


def pending_tasks(tasks: Iterable[Task], store: ResultStore, trials: int = 1) -> list[tuple[Task, int]]:
    """The (task, trial) pairs without an ``ok`` result; their old error records are removed, so each pair
    appears once in the file."""
    latest = latest_by_task(store.load())
    pending = [(task, trial) for task in tasks for trial in range(trials)
               if not ((key := (task.task_id, trial)) in latest and is_ok(latest[key]))]
    stale = {key for task, trial in pending if (key := (task.task_id, trial)) in latest}
    if stale:  # error records about to be retried; rewriting the file is needed only then
        store.drop(stale)
    return pending


def run_tasks(suite: Suite, agent: Agent, tasks: list[tuple[Task, int]], store: ResultStore, *,
              run_fields: dict[str, Any], max_workers: int = 8, wrap: EnvWrapper | None = None,
              on_result: Callable[[Record], None] | None = None) -> None:
    """Evaluate (task, trial) pairs concurrently, appending each record to ``store`` as soon as it is final."""
    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="task") as pool:
        futures = [pool.submit(evaluate_task, suite, agent, task, run_fields, wrap, trial) for task, trial in tasks]
        try:
            for future in as_completed(futures):
                record = future.result()
                store.append(record)
                if on_result:
                    on_result(record)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
