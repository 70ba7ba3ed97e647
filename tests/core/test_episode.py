"""evaluate_task never raises: a world that cannot even be built is an error result, retried by the next run."""

from __future__ import annotations

from occubench.core.agent import NOOP
from occubench.core.environment import Environment
from occubench.core.episode import evaluate_task
from occubench.core.suite import Suite
from occubench.core.task import Task
from occubench.core.trajectory import Trajectory
from occubench.core.verifier import Verdict
from occubench.errors import WorldError

TASK = Task(task_id=1, instruction="Do it.", scenario="S", category="Science & Research", domain="D", difficulty=1,
            env_name="e")


class Unbuildable(Suite):
    def __init__(self, error: Exception) -> None:
        self.error = error

    def tasks(self) -> list[Task]:
        return [TASK]

    def make_env(self, task: Task) -> Environment:
        raise self.error

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        raise AssertionError("never reached")


def test_a_world_that_cannot_be_built_is_an_error_result() -> None:
    result = evaluate_task(Unbuildable(WorldError("config unreadable")), NOOP, TASK, {})
    assert (result.status, result.error and result.error.kind, result.is_correct) == ("error", "environment", None)
    assert result.stop_reason == "error" and result.error is not None and "unreadable" in result.error.message
    internal = evaluate_task(Unbuildable(KeyError("bug")), NOOP, TASK, {})
    assert internal.error is not None and internal.error.kind == "internal"


def test_a_failing_wrapper_is_an_error_result() -> None:
    class Fine(Unbuildable):
        def make_env(self, task: Task) -> Environment:
            from occubench.workplace import WorkplaceEnvironment, generate_days
            return WorkplaceEnvironment(generate_days(0, 1)[0])

    def wrap(env: Environment, task: Task) -> Environment:
        raise RuntimeError("wrapper bug")

    result = evaluate_task(Fine(ValueError()), NOOP, TASK, {}, wrap=wrap)
    assert result.status == "error" and result.error is not None and "wrapper bug" in result.error.message
