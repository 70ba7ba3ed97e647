"""AWM scenarios as a suite: a task per task text, and each verdict decided as AWM decides it, saying which way.

- ``pure_code``: the task's pure-code verifier, run on the initial and final databases, decides (complete: pass);
- ``code_augmented``: the task's code-augmented verifier reports on the databases and the judge model decides from
  that report and the trajectory;
- ``judge``: a task with neither is judged by the judge model from the task's text and the trajectory.

A verifier the data gives but that does not run (it does not compile, or raises) is an environment error of that
task, recorded with its reason and never scored as the agent's; a task that needs a judge when the run has none is
an error too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from occubench.awm.world import AwmEnvironment, AwmWorld
from occubench.core.environment import Environment
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import RubricVerifier, Verdict
from occubench.errors import VerifierError
from occubench.util.aio import off_loop, run_sync

#: What AWM worlds are, where OccuBench's tasks have an industry category.
CATEGORY = "Agent World Model"


class AwmSuite(Suite):
    def __init__(self, worlds: Sequence[AwmWorld], judge: RubricVerifier | None = None) -> None:
        self.worlds = {world.name: world for world in worlds}
        self.judge = judge
        self._tasks = [
            Task(task_id=f"{world.name}/{index}", instruction=text, scenario=world.name, category=CATEGORY,
                 domain=world.name.rstrip("0123456789").rstrip("_") or world.name, difficulty=1,
                 env_name=world.name, metadata={"index": index})
            for world in worlds for index, text in enumerate(world.scenario.tasks)]

    def tasks(self) -> list[Task]:
        return self._tasks

    def world(self, task: Task) -> Environment:
        return self.worlds[task.env_name].environment()

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        return run_sync(self.averify(task, trajectory, env))

    async def averify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        instance = env.unwrapped
        assert isinstance(instance, AwmEnvironment)
        scenario, index = self.worlds[task.env_name].scenario, int(task.metadata["index"])
        diff = {"state_diff": await off_loop(instance.state_diff)}  # what the viewer shows of the episode
        if index in scenario.pure_verifiers:
            report = await off_loop(instance.verify, index, "pure", trajectory.final_answer)
            passed = report.get("result") == "complete"
            return Verdict(passed, f"pure-code verifier: {report.get('result')}",
                           details={"verification_mode": "pure_code", "verifier": report, **diff})
        sections = [("Task given to the agent", task.instruction)]
        mode = "judge"
        if index in scenario.verifiers:
            mode = "code_augmented"
            report = await off_loop(instance.verify, index, "code_augmented", trajectory.final_answer)
            sections.append(("What a verifier found in the initial and final databases",
                             json.dumps(report, indent=1, default=str)))
        if self.judge is None:
            raise VerifierError(f"task {task.task_id} needs a judge ({mode} verification): give --verifier-model")
        verdict = await self.judge.ajudge([*sections, ("Agent trajectory", trajectory.render())])
        verdict.details = {**verdict.details, "verification_mode": mode, **diff}
        return verdict
