"""One episode: Task → Environment (+ wrappers) ↔ Agent → Trajectory → Verifier → Result.

Failures that are not the agent's (the endpoint stayed down, the simulator or the judge gave nothing usable)
make a result with ``status: "error"``: it is left out of the completion rate and retried by the next run.
:func:`episode_result` is the one place a :class:`Result` is filled from an episode, whoever played it (a run, a
Gymnasium environment).
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from occubench import telemetry
from occubench.core.agent import Agent, play
from occubench.core.environment import Environment, JSONObject, Wrapper
from occubench.core.faults import FaultInjector
from occubench.core.hints import LiveHints
from occubench.core.results import ErrorInfo, FaultEvent, FaultWindow, LiveHint, Result
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import Verdict, averdict
from occubench.errors import TaskLimitReached, error_kind
from occubench.llm.cache import current_trial
from occubench.llm.ledger import TaskLimits, open_ledger
from occubench.llm.types import Usage
from occubench.util.aio import off_loop, run_sync
from occubench.util.log import current_task

log = logging.getLogger("occubench")
T = TypeVar("T")

#: How each fresh world of a task is wrapped (fault injection, the step limit) before the agent sees it.
WrapWorld = Callable[[Environment, Task], Environment]


class StepLimit(Wrapper):
    """The engine's hold on ``--max-steps`` for every kind of agent: after ``max_calls`` tool calls, each further
    call stops the episode (:class:`TaskLimitReached`), and an agent that catches that and goes on is still judged
    as stopped. The built-in agent also counts its turns against the same setting; with several calls in a turn,
    this count binds first."""

    def __init__(self, env: Environment, max_calls: int) -> None:
        super().__init__(env)
        self.max_calls, self.calls, self.reached = max_calls, 0, False

    async def acall(self, name: str, arguments: JSONObject) -> JSONObject:
        if self.calls >= self.max_calls:
            self.reached = True
            raise TaskLimitReached("max_steps", f"the agent reached {self.max_calls} tool calls (--max-steps)")
        self.calls += 1
        return await self.env.acall(name, arguments)


@dataclass
class WorldReport:
    """What a world and its wrappers know of an episode, taken before the world closes."""

    env_info: dict[str, Any] = field(default_factory=dict)
    fault_events: list[FaultEvent] = field(default_factory=list)
    fault_windows: list[FaultWindow] = field(default_factory=list)
    live_hints: list[LiveHint] = field(default_factory=list)

    @classmethod
    def of(cls, env: Environment) -> WorldReport:
        injector, hints = env.find(FaultInjector), env.find(LiveHints)
        return cls(env.info(), list(injector.events) if injector else [],
                   injector.fired_windows() if injector else [], list(hints.delivered) if hints else [])


def episode_result(task: Task, trajectory: Trajectory, run_fields: dict[str, Any], *, trial: int = 0,
                   verdict: Verdict | None = None, error: Exception | None = None,
                   world: WorldReport | None = None, tools: list[dict[str, Any]] | None = None,
                   usage: dict[str, Usage] | None = None, duration_s: float = 0.0) -> Result:
    """The record of one episode: the task, the run's fields, the trajectory, and its verdict — or the error that
    stood in its way (``status: "error"``, its kind from :func:`occubench.errors.error_kind`)."""
    result = Result(task_id=task.task_id, task_scenario_name=task.scenario, category=task.category,
                    domain=task.domain, difficulty_level=task.difficulty, trial=trial, **run_fields)
    judge_prompt: list[Any] = []
    if error is not None:
        result.status, result.error = "error", ErrorInfo(error_kind(error), str(error))
        result.votes, judge_prompt = getattr(error, "votes", []), getattr(error, "prompt", [])
        trajectory.stop_reason = trajectory.stop_reason or "error"
    elif verdict is not None:
        result.is_correct, result.feedback, result.votes = verdict.is_correct, verdict.feedback, verdict.votes
        result.verdict_details, judge_prompt = verdict.details, verdict.prompt
    world = world or WorldReport()
    result.env_info, result.fault_events, result.fault_windows = world.env_info, world.fault_events, world.fault_windows
    result.live_hints = world.live_hints
    result.step_count, result.trajectory = trajectory.step_count, trajectory.render()
    result.final_answer, result.stop_reason, result.steps = (trajectory.final_answer, trajectory.stop_reason,
                                                             trajectory.steps)
    result.messages, result.agent_output = trajectory.messages, trajectory.agent_output
    values = {"tools": tools, "instruction": task.instruction, "system_prompt": trajectory.system_prompt,
              "judge_prompt": judge_prompt}
    result.context_values = {kind: value for kind, value in values.items() if value}
    result.usage, result.duration_s = usage or {}, round(duration_s, 3)
    return result


@dataclass
class Episodes:
    """What evaluating a phase's episodes takes: its suite, the agent, the fields every result carries, how each
    fresh world is wrapped and the per-task limits (made by :class:`occubench.engine.factory.EpisodeFactory`)."""

    suite: Suite
    agent: Agent
    run_fields: dict[str, Any]
    wrap: WrapWorld | None = None
    limits: TaskLimits | None = None
    #: The run's name, as traces show it (:mod:`occubench.telemetry`).
    run: str = ""

    def world(self, task: Task) -> Environment:
        """A fresh world for one episode of ``task``, wrapped."""
        env = self.suite.world(task)
        return self.wrap(env, task) if self.wrap else env

    def evaluate(self, task: Task, trial: int = 0) -> Result:
        """:meth:`aevaluate`, for synchronous code."""
        return run_sync(self.aevaluate(task, trial))

    async def aevaluate(self, task: Task, trial: int = 0) -> Result:
        """One episode (trial ``trial`` of ``task``) and its verdict. Never raises for a failure of the world, the
        agent, the verifier or occubench itself: that is an error result, retried by the next run. An agent stopped
        by a limit is judged on what it did, with the limit as its stop reason. The world is opened and closed in a
        thread off the loop where the suite's worlds block (a sandbox worker starts and stops there); the agent,
        the world's calls and the verdict are awaited."""
        started = time.monotonic()
        current_task.set(task.task_id if trial == 0 else f"{task.task_id}#{trial}")
        current_trial.set(trial)
        trajectory, env, report = Trajectory(), None, None
        verdict: Verdict | None = None
        error: Exception | None = None
        tools: list[dict[str, Any]] = []
        with telemetry.episode(task, trial, self.run) as traced:  # a trace of its own, when traced
            with open_ledger(self.limits) as ledger:  # every request of this episode, by role, whatever ends it
                try:
                    env = await self._world_code(self.world, task)
                    tools = [spec.schema() for spec in env.tools()]
                    await self._play(task, env, trajectory)
                    verdict = await averdict(self.suite.averify(task, trajectory, env))
                except Exception as exc:  # noqa: BLE001 - every failure becomes a recorded, retryable error
                    error = exc
                finally:
                    if env is not None:
                        try:
                            report = await self._world_code(_close, env)
                        except Exception as exc:  # noqa: BLE001 - a world that fails to report or close: an error too
                            error = error or exc
            if error is not None and error_kind(error) == "internal":
                log.error("task %s failed inside occubench:\n%s", task.task_id,
                          "".join(traceback.format_exception(error)))
            result = episode_result(task, trajectory, self.run_fields, trial=trial, verdict=verdict, error=error,
                                    world=report, tools=tools, usage=ledger.by_role,
                                    duration_s=time.monotonic() - started)
            traced.done(result)
        return result

    async def _play(self, task: Task, env: Environment, trajectory: Trajectory) -> None:
        try:
            await play(self.agent, task, env, trajectory)
        except TaskLimitReached as exc:
            log.info("task %s stopped: %s", task.task_id, exc)
            trajectory.stop_reason = exc.reason
        if (limit := env.find(StepLimit)) is not None and limit.reached:
            trajectory.stop_reason = "max_steps"

    async def _world_code(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)``, off the loop if the suite's worlds block."""
        return await off_loop(function, *args) if self.suite.worlds_block else function(*args)


def _close(env: Environment) -> WorldReport:
    """What the world and its wrappers know of the episode; then the world is closed."""
    try:
        return WorldReport.of(env)
    finally:
        env.close()
