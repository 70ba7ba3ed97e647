"""`vf-eval` (verifiers' own CLI, from the verifiers peer) evaluates the occubench-verifiers environment
(integrations/verifiers, installed there as a user installs it) against the project's mock endpoint: each rollout
plays an episode of `occubench serve --protocol openenv`, and its reward is occubench's verdict, equal to a native
run's of the same tasks with the same scripted model.

The mock plays the reference solution of some executable tasks and calls the first two tools of the others, so the
rewards are both 1.0 and 0.0; an episode occubench cannot score is an error of the rollout, never a reward.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from occubench.cli import main as cli_main
from occubench.executable.registry import builtin_worlds
from occubench.testing import MockLLMServer, make_scripted_responder, scripted_responder
from tests.conftest import peer, write_small_data
from tests.openenv.test_peer import TOKEN, serving

SOLVED = ["insurance_claims/pay_water_claim", "clinic_scheduling/book_urgent_cardiology"]
UNSOLVED = ["warehouse_inventory/receive_short_shipment", "loan_underwriting/decide_on_dti"]
#: vf-eval reads the model's key from the variable it is told; the mock takes any key.
KEY_VARIABLE = "OCCUBENCH_TEST_MODEL_KEY"

#: Each starts vf-eval (and verifiers' imports take seconds) or occubench serve.
pytestmark = pytest.mark.slow


def reference_responder(request: dict[str, Any], index: int) -> str | dict[str, Any]:
    """The scripted mock, but an agent given one of SOLVED's instructions plays its reference solution, then
    answers with the reference answer: what occubench's reference agent does, by way of the model."""
    messages = request.get("messages") or []
    instruction = next((m.get("content") for m in messages if m.get("role") == "user"), None)
    task = _solved().get(instruction) if request.get("tools") else None
    if task is None:
        return scripted_responder(request, index)
    done = sum(1 for message in messages if message.get("role") == "tool")
    if done < len(task.reference):
        call = task.reference[done]
        return {"content": None, "tool_calls": [{"name": call.tool, "arguments": dict(call.arguments)}]}
    return task.answer


@functools.cache
def _tasks() -> dict[str, Any]:
    """The built-in executable tasks by id."""
    return {f"{world.name}/{task.id}": task for world in builtin_worlds() for task in world.tasks}


@functools.cache
def _solved() -> dict[str, Any]:
    return {_tasks()[task_id].instruction: _tasks()[task_id] for task_id in SOLVED}


def vf_eval(venv: Path, out: Path, base_url: str, *args: str, env: dict[str, str] | None = None) -> list[dict]:
    """Runs vf-eval on the occubench-verifiers environment; the episodes it wrote (traces.jsonl)."""
    command = [str(venv / "bin" / "vf-eval"), "occubench-verifiers", "-m", "mock", "--client.base-url", base_url,
               "--client.api-key-var", KEY_VARIABLE, "--no-push", "--no-rich", "-o", str(out), "--run.name", "vf",
               *args]
    occubench = shlex.join([sys.executable, "-m", "occubench"])  # this checkout's occubench, as its own command
    environment = {**os.environ, KEY_VARIABLE: "k", "OCCUBENCH_COMMAND": occubench, "HOME": str(out / "home"),
                   "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost", **(env or {})}
    done = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=out.parent, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return [json.loads(line) for line in (out / "vf" / "traces.jsonl").read_text().splitlines()]


def verdicts(run: Path) -> dict[tuple[str, int], tuple[bool | None, str]]:
    """(task, trial) -> (is_correct, feedback) of a run folder's results."""
    return {(r["task_id"], r["trial"]): (r["is_correct"], r["feedback"])
            for r in map(json.loads, (run / "results.jsonl").read_text().splitlines())}


def test_vf_eval_rewards_are_occubenchs_verdicts_equal_to_a_native_runs(tmp_path: Path) -> None:
    venv = peer("verifiers")
    tasks, runs = [*SOLVED, *UNSOLVED], tmp_path / "runs"
    select = ["--task-ids", *tasks]
    with MockLLMServer(reference_responder) as mock:
        episodes = vf_eval(venv, tmp_path / "vf", mock.base_url, "-r", "2", "--env.taskset.suite", "executable",
                           "--env.taskset.select", json.dumps(select), "--env.taskset.run",
                           json.dumps(["--trials", "2", "--output-dir", str(runs), "--run-name", "served"]))
        assert cli_main(["run", "--suite", "executable", *select, "--trials", "2", "--agent-model", "mock",
                         "--base-url", mock.base_url, "--api-key", "k", "--output-dir", str(runs),
                         "--run-name", "native"]) == 0
    native = verdicts(runs / "native")
    assert len(native) == 8 and {passed for passed, _ in native.values()} == {True, False}
    seen = {}
    for episode in episodes:
        assert episode["ok"], episode["errors"]
        (trace,) = episode["traces"]
        verdict = trace["info"]["occubench"]
        seen[(episode["task"]["data"]["id"], verdict["trial"])] = (verdict["is_correct"], verdict["feedback"])
        assert trace["rewards"]["occubench"]["score"] == float(verdict["is_correct"])
        # The rollout's prompt is the episode's: the task's instruction, occubench's system prompt.
        assert trace["task"]["data"]["prompt"] == _tasks()[episode["task"]["data"]["id"]].instruction
        assert trace["nodes"][0]["message"]["role"] == "system"
        assert "You are a professional agent" in trace["nodes"][0]["message"]["content"]
    assert seen == native
    # The episodes are stored as any run's: the served run folder holds the same verdicts.
    assert verdicts(runs / "served") == native


def test_an_episode_occubench_cannot_score_is_an_error_of_the_rollout_not_a_reward(tmp_path: Path) -> None:
    """The simulated sample with a world model whose replies never parse: occubench records an environment error,
    which it does not score; the rollout is an error (no reward). The server is one already serving, with a serve
    token: the environment connects to its URL."""
    venv = peer("verifiers")
    data = write_small_data(tmp_path / "data")
    select = ["--data-dir", str(data), "--limit", "1"]
    with MockLLMServer(make_scripted_responder(malformed_rate=1.0)) as mock, serving(
            ["--suite", "occubench", *select, "--world-model", "world", "--base-url", mock.base_url, "--api-key", "k",
             "--output-dir", str(tmp_path / "runs"), "--run-name", "served"], tmp_path / "serve.log") as (url, process):
        (episode,) = vf_eval(venv, tmp_path / "vf", mock.base_url, "--env.taskset.suite", "occubench",
                             "--env.taskset.select", json.dumps(select), "--env.taskset.url", url,
                             env={"OCCUBENCH_SERVE_TOKEN": TOKEN})
        assert process.wait(timeout=120) == 1  # its one episode played, the run ends, with an error (status 1)
    (record,) = map(json.loads, (tmp_path / "runs" / "served" / "results.jsonl").read_text().splitlines())
    assert record["status"] == "error" and record["is_correct"] is None
    (trace,) = episode["traces"]
    assert not episode["ok"] and not trace["ok"]
    assert trace["rewards"].get("occubench") is None
    assert any("did not score" in error["message"] for error in trace["errors"]), trace["errors"]
    assert trace["info"]["occubench"]["status"] == "error"


def test_a_rollout_beyond_the_runs_trials_is_an_error_that_says_so(tmp_path: Path) -> None:
    """-r 2 on a run of one trial: one rollout plays the episode, the other has none to play. Without --run-name the
    eval's run folder is its own, under results/ where vf-eval runs."""
    venv = peer("verifiers")
    with MockLLMServer() as mock:
        episodes = vf_eval(venv, tmp_path / "vf", mock.base_url, "-r", "2", "--env.taskset.suite", "executable",
                           "--env.taskset.select", json.dumps(["--task-ids", UNSOLVED[0]]))
    refused, played = sorted(episodes, key=lambda episode: episode["ok"])  # in the order they ended
    assert not refused["ok"] and played["ok"]
    (error,) = refused["traces"][0]["errors"]
    assert "each of its episodes is under way or done" in error["message"] and "--trials" in error["message"]
    (folder,) = (tmp_path / "results").iterdir()
    assert folder.name.startswith("verifiers-") and len(verdicts(folder)) == 1


def test_load_environment_gives_the_environment_of_a_suite(tmp_path: Path) -> None:
    """The Python entry point: load_environment(suite, **options) is verifiers' environment of those tasks, played by
    the package's harness, its agent in the local runtime."""
    venv = peer("verifiers")
    program = """
import json, sys
import occubench_verifiers
import verifiers.v1 as vf
env = occubench_verifiers.load_environment("executable", select=["--limit", "2"], run=["--max-steps", "5"])
json.dump({"env": type(env).__name__, "tasks": [task.data.id for task in env.taskset],
           "harness": vf.default_agent_harness(env.config.taskset.id).id, "runtime": env.config.agent.runtime.type,
           "run": env.taskset.config.run}, sys.stdout)
"""
    done = subprocess.run([str(venv / "bin" / "python"), "-c", program], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OCCUBENCH_COMMAND": shlex.join([sys.executable, "-m", "occubench"])},
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == {
        "env": "OccubenchEnv", "tasks": ["clinic_scheduling/book_urgent_cardiology",
                                         "clinic_scheduling/cover_dermatology_absence"],
        "harness": "occubench-verifiers", "runtime": "subprocess", "run": ["--max-steps", "5"]}
