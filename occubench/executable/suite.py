"""Executable worlds as a suite: the code checks decide; an optional LLM judge adds a diagnosis."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from occubench.core.environment import Environment
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import LabelJudge, Verdict
from occubench.errors import LLMError, VerifierError
from occubench.executable.environment import WorldEnvironment
from occubench.executable.isolated import IsolatedWorld, open_environment
from occubench.executable.world import ExecTask, World
from occubench.util.aio import off_loop, run_sync


def exec_task(task: Task) -> ExecTask:
    return task.metadata["exec_task"]


class ExecutableSuite(Suite):
    """The tasks of ``worlds``: definitions run in this process, or worlds loaded by workers (as runs use)."""

    def __init__(self, worlds: Sequence[World | IsolatedWorld], judge: LabelJudge | None = None) -> None:
        self.worlds = {world.name: world for world in worlds}
        self.judge = judge
        self._tasks = [
            Task(task_id=f"{world.name}/{spec.id}", instruction=spec.instruction, scenario=world.scenario,
                 category=world.category, domain=world.domain, difficulty=spec.difficulty, env_name=world.name,
                 verification_plan=spec.rubric, metadata={"exec_task": spec})
            for world in worlds for spec in world.tasks
        ]

    def tasks(self) -> list[Task]:
        return self._tasks

    def world(self, task: Task) -> Environment:
        return open_environment(self.worlds[task.env_name])

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        return run_sync(self.averify(task, trajectory, env))

    async def averify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        """The code checks, in a thread off the loop (they read the world's database, maybe in a sandbox worker);
        then the label judge's diagnosis, awaited."""
        verdict = await off_loop(self.checked, task, trajectory, env)
        if self.judge:
            await self._diagnose(task, trajectory, verdict)
        return verdict

    @staticmethod
    def checked(task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        """The code checks' verdict of ``trajectory`` on the world instance ``env`` (its final state)."""
        instance = env.unwrapped
        assert isinstance(instance, WorldEnvironment)
        checks, diff = instance.verify(exec_task(task).id, trajectory.final_answer)
        passed = bool(checks) and all(check.passed for check in checks)
        feedback = "; ".join(f"{'PASS' if c.passed else 'FAIL'} {c.name}" + (f": {c.message}" if c.message else "")
                             for c in checks)
        details: dict[str, Any] = {"checks": [asdict(check) for check in checks], "state_diff": diff}
        return Verdict(is_correct=passed, feedback=feedback, details=details)

    async def _diagnose(self, task: Task, trajectory: Trajectory, verdict: Verdict) -> None:
        assert self.judge is not None
        details = verdict.details
        try:
            label = await self.judge.alabel([
                ("Task given to the agent", task.instruction),
                ("Rubric", task.verification_plan or "(none)"),
                ("Code checks on the final database", verdict.feedback),
                ("Changes the agent made to the database", json.dumps(details["state_diff"], indent=1, default=str)),
                ("Agent trajectory", trajectory.render()),
            ])
        except (LLMError, VerifierError) as exc:
            # The code checks decide; a judge that failed only loses its diagnosis, never the verdict.
            details["judge_error"] = str(exc)
            verdict.prompt = getattr(exc, "prompt", [])
        else:
            details.update(judge_label=label.label, judge_feedback=label.feedback)
            if label.cut:
                details["judge_prompt_cut"] = label.cut
            verdict.prompt = label.prompt
