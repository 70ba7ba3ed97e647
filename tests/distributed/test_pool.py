"""The rollout pool: executable worlds in Ray workers, reset per episode, stepped while the caller decides."""

from __future__ import annotations

from typing import Any

import pytest

from occubench.core.results import Result
from occubench.core.trajectory import Step
from occubench.engine.rollouts import rollout_rows
from occubench.errors import ConfigError
from occubench.executable.registry import worlds_of
from occubench.executable.suite import ExecutableSuite, exec_task
from occubench.testing import MockLLMServer
from tests.conftest import extra_reason

pytest.importorskip("ray", reason=extra_reason("ray"))  # the Ray instance is the package's (conftest.py)
pytest.importorskip("gymnasium", reason=extra_reason("gym"))

from occubench.distributed import Rollout, RolloutPool  # after the skips: it imports ray
from occubench.gym import EndpointPolicy

pytestmark = pytest.mark.slow  # each test process starts a Ray cluster


def reference_policy(observation: str, info: dict[str, Any]) -> dict[str, Any]:
    """Each task's reference solution, one call per step, then its answer."""
    task = exec_task(TASKS[info["task_id"]])
    done = info.get("step", 0)  # the steps taken so far (absent before the first)
    if done < len(task.reference):
        call = task.reference[done]
        return {"name": call.tool, "arguments": dict(call.arguments)}
    return {"answer": task.answer}


TASKS = {task.task_id: task for task in ExecutableSuite(worlds_of(None)).tasks()}


def test_rollouts_reset_each_episode_and_earn_the_verdicts() -> None:
    tasks = list(TASKS)[:6]
    with RolloutPool("executable", workers=2, per_worker=2) as pool:
        solved = pool.rollout(reference_policy, tasks, n=3)
        # An episode that answers at once fails the checks: the worlds start fresh, whatever came before.
        idle = pool.rollout(lambda observation, info: {"answer": "nothing to do"}, tasks)
    assert [(r.task_id, r.sample) for r in solved] == [(t, j) for t in tasks for j in range(3)]
    assert all(r.terminated and r.reward == 1.0 and r.info["is_correct"] for r in solved)
    first = solved[0]
    assert first.instruction == TASKS[tasks[0]].instruction and first.start["tools"]
    assert len(first.actions) == len(first.observations) == len(first.rewards) == \
        len(exec_task(TASKS[tasks[0]]).reference) + 1
    assert all(r.reward == 0.0 and r.info["is_correct"] is False for r in idle)


def test_a_bad_task_is_the_environments_own_error() -> None:
    with RolloutPool("executable", workers=1, per_worker=1) as pool, pytest.raises(ConfigError, match="no task"):
        pool.rollout(reference_policy, ["no/such-task"])


def test_rollouts_keep_the_policys_tokens_and_give_the_rows_of_an_exported_run() -> None:
    tasks = list(TASKS)[:2]
    with MockLLMServer() as server, RolloutPool("executable", workers=1, per_worker=2) as pool:
        rollouts = pool.rollout(EndpointPolicy("agent-m", base_url=server.base_url, api_key="k"), tasks, n=2)
    assert len(rollouts) == 4
    for rollout in rollouts:
        assert rollout.tokens == [action["tokens"] for action in rollout.actions] and all(rollout.tokens)
        own = [token for turn in rollout.tokens for token in turn["completion_ids"]]
        row, = rollout.rows()  # the prompts extend: one row
        assert [token for token, mask in zip(row["input_ids"], row["mask"]) if mask] == own
        assert (row["task_id"], row["trial"], row["reward"]) == (rollout.task_id, rollout.sample, rollout.reward)
        # The rows of the same episode as a run's result, the form `occubench export` writes.
        result = Result(task_id=rollout.task_id, trial=rollout.sample, is_correct=rollout.reward == 1.0,
                        steps=[Step(None, tokens=tokens) for tokens in rollout.tokens])
        assert rollout.rows() == list(rollout_rows(result))


def test_an_episode_to_leave_out_gives_no_rows() -> None:
    tokens = {"prompt_ids": [1], "completion_ids": [2], "logprobs": None}
    kept = Rollout("t", 0, "do it", {}, actions=[{"answer": "x"}], tokens=[tokens], rewards=[1.0])
    assert [row["input_ids"] for row in kept.rows()] == [[1, 2]]
    kept.info["error"] = {"kind": "environment", "message": "down"}
    assert kept.rows() == []
