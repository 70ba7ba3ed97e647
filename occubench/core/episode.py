"""One episode: Task → Environment (+ wrappers) ↔ Agent → Trajectory → Verifier → Result.

Failures that are not the agent's (the endpoint stayed down, the simulator or the judge gave nothing usable)
make a result with ``status: "error"``: it is left out of the completion rate and retried by the next run.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from occubench.core.agent import Agent, play
from occubench.core.environment import Environment
from occubench.core.faults import FaultInjector
from occubench.core.results import ErrorInfo, Result
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.core.trajectory import Trajectory
from occubench.errors import TaskLimitReached, error_kind
from occubench.llm import Message
from occubench.llm.cache import current_trial
from occubench.llm.ledger import TaskLimits, open_ledger
from occubench.util.aio import off_loop, run_sync
from occubench.util.log import current_task

log = logging.getLogger("occubench")
T = TypeVar("T")

#: Wraps a task's fresh environment (fault injection, say) before the agent sees it.
EnvWrapper = Callable[[Environment, Task], Environment]


def open_world(suite: Suite, task: Task, wrap: EnvWrapper | None = None) -> Environment:
    """A fresh world for one episode of ``task``, wrapped by ``wrap``."""
    env = suite.make_env(task)
    return wrap(env, task) if wrap else env


def evaluate_task(suite: Suite, agent: Agent, task: Task, run_fields: dict[str, Any],
                  wrap: EnvWrapper | None = None, trial: int = 0, limits: TaskLimits | None = None) -> Result:
    """:func:`aevaluate_task`, for synchronous code."""
    return run_sync(aevaluate_task(suite, agent, task, run_fields, wrap, trial, limits))


async def aevaluate_task(suite: Suite, agent: Agent, task: Task, run_fields: dict[str, Any],
                         wrap: EnvWrapper | None = None, trial: int = 0, limits: TaskLimits | None = None) -> Result:
    """One episode (trial ``trial`` of ``task``) and its verdict. Never raises for a failure of the world, the
    agent, the verifier or occubench itself: that is an error result, retried by the next run. An agent stopped by
    ``limits`` is judged on what it did, with the limit as its stop reason. The world is opened and closed in a
    thread off the loop (a sandbox worker starts and stops there); the agent, the world's calls and the verdict
    are awaited (see :func:`occubench.core.agent.play`, :meth:`Environment.acall`, :meth:`Suite.averify`)."""
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
            env = await _world_code(suite, open_world, suite, task, wrap)
            result.context_values["tools"] = [spec.schema() for spec in env.tools()]
            try:
                await play(agent, task, env, trajectory)
            except TaskLimitReached as exc:
                log.info("task %s stopped: %s", task.task_id, exc)
                trajectory.stop_reason = exc.reason
            verdict = await suite.averify(task, trajectory, env)
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
                await _world_code(suite, _finish, env, result)
    result.step_count, result.trajectory = trajectory.step_count, trajectory.render()
    result.final_answer, result.stop_reason, result.steps = (trajectory.final_answer, trajectory.stop_reason,
                                                             trajectory.steps)
    result.messages, result.agent_output = trajectory.messages, trajectory.agent_output
    result.context_values.update(instruction=task.instruction, system_prompt=trajectory.system_prompt,
                                 judge_prompt=judge_prompt)
    result.context_values = {kind: value for kind, value in result.context_values.items() if value}
    result.usage = ledger.by_role
    result.duration_s = round(time.monotonic() - started, 3)
    return result


async def _world_code(suite: Suite, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, off the loop if the suite's worlds block."""
    return await off_loop(function, *args) if suite.worlds_block else function(*args)


def _finish(env: Environment, result: Result) -> None:
    """Collect what the world and its wrappers know of the episode, then close the world."""
    try:
        result.env_info = env.info()
        if (injector := env.find(FaultInjector)) is not None:
            result.fault_events, result.fault_windows = list(injector.events), injector.fired_windows()
    finally:
        env.close()


@dataclass
class Episodes:
    """What evaluating a phase's episodes takes: its suite, the agent, the fields every result carries, the wrapper
    of each fresh environment and the per-task limits (made by :class:`occubench.engine.factory.EpisodeFactory`)."""

    suite: Suite
    agent: Agent
    run_fields: dict[str, Any]
    wrap: EnvWrapper | None = None
    limits: TaskLimits | None = None

    def world(self, task: Task) -> Environment:
        return open_world(self.suite, task, self.wrap)

    def evaluate(self, task: Task, trial: int = 0) -> Result:
        return evaluate_task(self.suite, self.agent, task, self.run_fields, self.wrap, trial, self.limits)

    async def aevaluate(self, task: Task, trial: int = 0) -> Result:
        return await aevaluate_task(self.suite, self.agent, task, self.run_fields, self.wrap, trial, self.limits)
