"""An episode never raises: a world that cannot even be built is an error result, retried by the next run."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench import load_results
from occubench.cli import main as cli
from occubench.core.agent import NOOP
from occubench.core.environment import Environment
from occubench.core.episode import Episodes
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

    def world(self, task: Task) -> Environment:
        raise self.error

    def verify(self, task: Task, trajectory: Trajectory, env: Environment) -> Verdict:
        raise AssertionError("never reached")


def test_a_world_that_cannot_be_built_is_an_error_result() -> None:
    result = Episodes(Unbuildable(WorldError("config unreadable")), NOOP, {}).evaluate(TASK)
    assert (result.status, result.error and result.error.kind, result.is_correct) == ("error", "environment", None)
    assert result.stop_reason == "error" and result.error is not None and "unreadable" in result.error.message
    internal = Episodes(Unbuildable(KeyError("bug")), NOOP, {}).evaluate(TASK)
    assert internal.error is not None and internal.error.kind == "internal"


def test_a_failing_wrapper_is_an_error_result(tmp_path: Path) -> None:
    class Fine(Unbuildable):
        def world(self, task: Task) -> Environment:
            from occubench.workplace import generate_days
            from tests.workplace.families import played
            return played(generate_days(0, 1)[0], tmp_path / "day")

    def wrap(env: Environment, task: Task) -> Environment:
        raise RuntimeError("wrapper bug")

    result = Episodes(Fine(ValueError()), NOOP, {}, wrap=wrap).evaluate(TASK)
    assert result.status == "error" and result.error is not None and "wrapper bug" in result.error.message


AGENT = '''
from occubench.core.trajectory import Step, ToolCall
from occubench.errors import TaskLimitReached

class Greedy:
    """Ignores --max-steps: calls a tool forever; with catch, swallows the engine's stop and answers anyway."""

    def __init__(self, context):
        self.catch = context.config.agent.endswith("Stubborn")

    def run(self, task, env, trajectory):
        name = env.tools()[0].name
        for _ in range(1000):
            try:
                trajectory.steps.append(Step(None, [ToolCall(name, "{}", env.call(name, {}))]))
            except TaskLimitReached:
                if not self.catch:
                    raise
        trajectory.final_answer = "done"
        trajectory.stop_reason = "answer"

Stubborn = Greedy
'''


@pytest.mark.parametrize("name", ["Greedy", "Stubborn"])
def test_an_agent_that_ignores_max_steps_is_stopped_by_the_engine(tmp_path: Path, name: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "greedy_agent.py").write_text(AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    assert cli(["run", "--suite", "executable", "--agent", f"greedy_agent:{name}", "--max-steps", "3",
                "--task-ids", "clinic_scheduling/book_urgent_cardiology", "--output-dir", str(out)]) == 0
    [result] = load_results(next(out.glob("*/results.jsonl")))
    assert (result.status, result.stop_reason, len(result.tool_calls)) == ("ok", "max_steps", 3)
