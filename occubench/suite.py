"""The contract between a kind of world and the harness.

Every world kind (LLM-simulated, executable, workplace) provides a :class:`Suite`: its tasks, a fresh environment
per task, and a verifier for a finished trajectory. The runner knows nothing else about the world.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from occubench.environment import Environment
from occubench.task import Task
from occubench.trajectory import Trajectory
from occubench.verifier import Verdict


class Suite(ABC):
    @abstractmethod
    def tasks(self) -> list[Task]:
        """Every task of the suite, in a stable order."""

    @abstractmethod
    def make_env(self, task: Task) -> Environment:
        """A fresh, isolated environment for one episode of ``task``."""

    @abstractmethod
    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        """Judge the finished episode; ``env`` is in its final state."""
