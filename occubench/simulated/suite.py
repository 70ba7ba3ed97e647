"""The OccuBench benchmark as a suite: LLM-simulated environments judged by a rubric verifier."""

from __future__ import annotations

import json

from occubench.core.environment import Environment
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import RubricVerifier, Verdict
from occubench.llm import Model
from occubench.simulated.config import WorldModelRegistry
from occubench.simulated.environment import SimulatedEnvironment
from occubench.util.aio import run_sync


class OccuBenchSuite(Suite):
    worlds_block = False  # a simulated world is a prompt and a history
    def __init__(self, tasks: list[Task], registry: WorldModelRegistry, world_model: Model, verifier: RubricVerifier,
                 *, fault_rules: str | None = None, context: int | None = None) -> None:
        self._tasks = tasks
        self.context = context  # the world model's context window, in tokens
        self.registry = registry
        self.world_model = world_model
        self.verifier = verifier
        self.fault_rules = fault_rules

    def tasks(self) -> list[Task]:
        return self._tasks

    def world(self, task: Task) -> Environment:
        return SimulatedEnvironment(self.registry.get(task.env_name), self.world_model.client, self.world_model.name,
                              params=self.world_model.params, fault_rules=self.fault_rules, context=self.context)

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        return run_sync(self.averify(task, trajectory, env))

    async def averify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        config = self.registry.get(task.env_name)
        return await self.verifier.ajudge([
            ("Scenario", task.scenario),
            ("Initial state of the environment", json.dumps(config.initial_state, indent=1, ensure_ascii=False)),
            ("Meaning of the state fields", json.dumps(config.state_description, indent=1, ensure_ascii=False)),
            ("Task given to the agent", task.instruction),
            ("Verification plan", task.verification_plan),
            ("Agent trajectory", trajectory.render()),
        ])
