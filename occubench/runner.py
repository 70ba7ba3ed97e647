"""Running tasks: Task → Environment ↔ Agent → Trajectory → Verifier → Result → store.

Failures that are not the agent's (the endpoint stayed down, the simulator or the judge gave nothing usable)
make a result with ``status: "error"``: it is left out of the completion rate and retried by the next run.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from occubench._log import current_task
from occubench.agent import Agent
from occubench.environment import Environment
from occubench.errors import (
    ContextLengthError,
    LLMRequestError,
    LLMUnavailableError,
    TaskLimitReached,
    VerifierError,
    WorldError,
)
from occubench.faults import FaultInjector
from occubench.llm import Message
from occubench.llm.cache import CacheMissError, current_trial
from occubench.llm.ledger import TaskLimits, open_ledger
from occubench.results import ErrorInfo, Result
from occubench.store import ResultStore, latest_by_task
from occubench.suite import Suite
from occubench.task import Task
from occubench.trajectory import Trajectory

log = logging.getLogger("occubench")

#: The kind of error each of our exceptions is recorded as (a result's error.kind).
ERROR_KINDS: tuple[tuple[type[Exception], str], ...] = (
    (CacheMissError, "cache_miss"),
    (ContextLengthError, "context_length"),
    (LLMUnavailableError, "infrastructure"),
    (LLMRequestError, "request_rejected"),
    (WorldError, "environment"),
    (VerifierError, "verifier"),
)


def error_kind(exc: Exception) -> str:
    return next((kind for cls, kind in ERROR_KINDS if isinstance(exc, cls)), "internal")


#: Wraps a task's fresh environment (fault injection, say) before the agent sees it.
EnvWrapper = Callable[[Environment, Task], Environment]


def evaluate_task(suite: Suite, agent: Agent, task: Task, run_fields: dict[str, Any],
                  wrap: EnvWrapper | None = None, trial: int = 0, limits: TaskLimits | None = None) -> Result:
    """One episode (trial ``trial`` of ``task``) and its verdict. Never raises for a failure of the world, the
    agent, the verifier or occubench itself: that is an error result, retried by the next run. An agent stopped by
    ``limits`` is judged on what it did, with the limit as its stop reason."""
    started = time.monotonic()
    current_task.set(task.task_id if trial == 0 else f"{task.task_id}#{trial}")
    current_trial.set(trial)
    trajectory = Trajectory()
    result = Result(task_id=task.task_id, task_scenario_name=task.scenario, category=task.category,
                    domain=task.domain, difficulty_level=task.difficulty, trial=trial, **run_fields)
    env: Environment | None = None
    judge_prompt: list[Message] = []
    with open_ledger(limits) as ledger:  # every request of this episode, by role, whatever ends it
        try:
            env = suite.make_env(task)
            if wrap:
                env = wrap(env, task)
            result.context_values["tools"] = [spec.schema() for spec in env.tools()]
            try:
                agent.run(task, env, trajectory)
            except TaskLimitReached as exc:
                log.info("task %s stopped: %s", task.task_id, exc)
                trajectory.stop_reason = exc.reason
            verdict = suite.verify(task, trajectory, env)
            result.is_correct, result.feedback, result.votes = verdict.is_correct, verdict.feedback, verdict.votes
            result.verdict_details, judge_prompt = verdict.details, verdict.prompt
        except Exception as exc:  # noqa: BLE001 - every failure becomes a recorded, retryable error
            kind = error_kind(exc)
            if kind == "internal":
                log.error("task %s failed inside occubench:\n%s", task.task_id, traceback.format_exc())
            result.status, result.error, result.is_correct = "error", ErrorInfo(kind, str(exc)), None
            result.votes, judge_prompt = getattr(exc, "votes", []), getattr(exc, "prompt", [])
            trajectory.stop_reason = trajectory.stop_reason or "error"
        finally:
            if env is not None:
                _finish(env, result)
    result.step_count, result.trajectory = trajectory.step_count, trajectory.render()
    result.final_answer, result.stop_reason, result.steps = (trajectory.final_answer, trajectory.stop_reason,
                                                             trajectory.steps)
    result.messages = trajectory.messages
    result.context_values.update(instruction=task.instruction, system_prompt=trajectory.system_prompt,
                                 judge_prompt=judge_prompt)
    result.context_values = {kind: value for kind, value in result.context_values.items() if value}
    result.usage = ledger.by_role
    result.duration_s = round(time.monotonic() - started, 3)
    return result


def _finish(env: Environment, result: Result) -> None:
    """Collect what the world and its wrappers know of the episode, then close the world."""
    try:
        result.env_info = env.info()
        if (injector := FaultInjector.of(env)) is not None:
            result.fault_events, result.fault_windows = list(injector.events), injector.fired_windows()
    finally:
        env.close()


def pending(tasks: Iterable[Task], latest: dict[tuple[Any, int], Result], trials: int) -> list[tuple[Task, int]]:
    """The (task, trial) pairs of ``tasks`` without an ``ok`` result in ``latest``."""
    return [(task, trial) for task in tasks for trial in range(trials)
            if not ((key := (task.task_id, trial)) in latest and latest[key].ok)]


def pending_tasks(tasks: Iterable[Task], store: ResultStore,
                  trials: int = 1) -> tuple[list[tuple[Task, int]], list[Result]]:
    """The (task, trial) pairs without an ``ok`` result, and the latest results of the others in the run
    directory (kept as they are). Each pending pair's old error record is replaced by its new result
    (:meth:`ResultStore.supersede`), so each pair appears once in the file."""
    latest = latest_by_task(store.load())
    todo = pending(tasks, latest, trials)
    running = {(task.task_id, trial) for task, trial in todo}
    store.supersede(running & latest.keys())
    return todo, [result for key, result in latest.items() if key not in running]

@dataclass
class Episodes:
    """What evaluating a phase's episodes takes: its suite, the agent, the fields every result carries, the wrapper
    of each fresh environment and the per-task limits. Built from the run's config alone (``occubench._run``), so a
    Ray worker builds its own."""

    suite: Suite
    agent: Agent
    run_fields: dict[str, Any]
    wrap: EnvWrapper | None = None
    limits: TaskLimits | None = None

    def evaluate(self, task: Task, trial: int = 0) -> Result:
        return evaluate_task(self.suite, self.agent, task, self.run_fields, self.wrap, trial, self.limits)


def run_tasks(suite: Suite, agent: Agent, tasks: list[tuple[Task, int]], store: ResultStore, *,
              run_fields: dict[str, Any], max_workers: int = 8, wrap: EnvWrapper | None = None,
              on_result: Callable[[Result], None] | None = None, limits: TaskLimits | None = None,
              may_start: Callable[[], bool] | None = None) -> int:
    """Evaluate (task, trial) pairs concurrently, appending each result to ``store`` as soon as it is final. A
    pair is started only while ``may_start()`` holds (a run-wide budget); returns how many were not started."""
    return run_episodes(Episodes(suite, agent, run_fields, wrap, limits), tasks, store, max_workers=max_workers,
                        on_result=on_result, may_start=may_start)


def run_episodes(episodes: Episodes, tasks: list[tuple[Task, int]], store: ResultStore, *, max_workers: int = 8,
                 on_result: Callable[[Result], None] | None = None,
                 may_start: Callable[[], bool] | None = None) -> int:
    """:func:`run_tasks` in this process's threads, for episodes already assembled. Pairs are handed out from this
    thread as others finish, after each finished one is recorded: ``may_start`` sees every result before it."""
    queue = deque(tasks)
    not_started = 0
    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="task") as pool:
        running: set[Future[Result]] = set()
        try:
            while queue or running:
                while queue and len(running) < max_workers:
                    task, trial = queue.popleft()
                    if may_start is not None and not may_start():
                        not_started += 1
                        continue
                    running.add(pool.submit(episodes.evaluate, task, trial))
                if not running:
                    break
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    result = future.result()
                    store.append(result)
                    if on_result:
                        on_result(result)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return not_started
