"""Twin worlds as a suite: the agent acts in each executable world's simulated twin, its real instance kept in step.

Each episode is judged twice over the same trajectory: in the simulated world, as an OccuBench run judges it (the
rubric verifier on the twin's config and rubric: the result's verdict), and in the real one, as the real world's
own suite judges it — a world folder's code checks, an AWM scenario's verifier or judge
(``verdict_details["executable"]``); ``flipped`` says they differ. Every call's pair of answers and how they compare
are in ``env_info["twin_calls"]``.
"""

from __future__ import annotations

from dataclasses import replace

from occubench.core.environment import Environment
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import Verdict
from occubench.executable.isolated import IsolatedWorld
from occubench.executable.suite import ExecutableSuite
from occubench.llm import Model
from occubench.simulated.suite import OccuBenchSuite
from occubench.twin.derive import twin_rubric
from occubench.twin.shadow import Shadow
from occubench.util.aio import run_sync


def twin_tasks(worlds: list[IsolatedWorld]) -> list[Task]:
    """The executable tasks, each with its twin's verification plan."""
    by_name = {world.name: world for world in worlds}
    return [replace(task, verification_plan=twin_rubric(by_name[task.env_name], task.metadata["exec_task"]))
            for task in ExecutableSuite(worlds).tasks()]


class TwinSuite(Suite):
    """``simulated`` plays the twins (an :class:`OccuBenchSuite` on their derived configs); ``real`` is the real
    worlds' suite, whose instances are kept in step and whose verdict is the real one; ``judge`` decides the calls
    the cheap checks leave open (see :mod:`occubench.twin.agreement`)."""

    def __init__(self, real: Suite, simulated: OccuBenchSuite, judge: Model | None) -> None:
        self.real, self.simulated, self.judge = real, simulated, judge

    def tasks(self) -> list[Task]:
        return self.simulated.tasks()

    def world(self, task: Task) -> Environment:
        real = self.real.world(task)
        try:
            return Shadow(self.simulated.world(task), real, self.judge)
        except BaseException:
            real.close()
            raise

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        return run_sync(self.averify(task, trajectory, env))

    async def averify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        shadow = env.find(Shadow)
        if shadow is None:
            raise TypeError(f"{type(env).__name__} holds no twin world")
        real = await self.real.averify(task, trajectory, shadow.real)
        verdict = await self.simulated.averify(task, trajectory, shadow.env)
        calls = shadow.calls
        verdict.details.update(
            executable={"is_correct": real.is_correct, **real.details},
            flipped=verdict.is_correct != real.is_correct,
            call_agreement={"calls": len(calls), "agreed": sum(call["agree"] is True for call in calls),
                            "undecided": sum(call["agree"] is None for call in calls)})
        return verdict
