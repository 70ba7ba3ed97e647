"""The Inspect tasks, run by Inspect against the loopback server through its OpenAI provider: each sample's verdict
(and the trajectory the judge read) equals that of ``occubench run`` on the same tasks and the same scripted server;
epochs reduce to pass@k and pass^k; errors stay errors; ``occubench report`` reads the logs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import extra_reason

inspect_ai = pytest.importorskip("inspect_ai", reason=extra_reason("inspect"))

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import EvalLog  # noqa: E402
from inspect_ai.model import Model as InspectModel  # noqa: E402
from inspect_ai.model import get_model  # noqa: E402
from rich.console import Console  # noqa: E402

import occubench  # noqa: E402
from occubench.cli import main as cli  # noqa: E402
from occubench.config import RunConfig  # noqa: E402
from occubench.core.results import Result  # noqa: E402
from occubench.core.tools import unknown_tool  # noqa: E402
from occubench.inspect import executable, read_log, workplace  # noqa: E402
from occubench.inspect import occubench as occubench_task  # noqa: E402
from occubench.report import pass_at_k, pass_hat_k  # noqa: E402
from occubench.testing import MockLLMServer, make_scripted_responder, scripted_responder  # noqa: E402
from tests.conftest import write_small_data  # noqa: E402

DATE = "2026-03-02"  # both harnesses tell the agent the same day


@pytest.fixture
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as started:
        yield started


def _model(server: MockLLMServer, name: str) -> InspectModel:
    return get_model(f"openai/{name}", base_url=server.base_url, api_key="k", memoize=False)


def _inspect(task: Any, server: MockLLMServer, logs: Path, roles: tuple[str, ...] = (), **options: Any) -> EvalLog:
    [log] = inspect_eval(task, model=_model(server, "gpt-4o"), model_roles={r: _model(server, "gpt-4o-mini")
                                                                             for r in roles},
                         log_dir=str(logs), display="none", **options)
    return log


def _ours(tmp_path: Path, server: MockLLMServer, **settings: Any) -> dict[tuple[str, int], Result]:
    config = RunConfig.create({"agent_model": "gpt-4o", "base_url": server.base_url, "api_key": "k", "date": DATE,
                               "output_dir": str(tmp_path / "runs"), **settings})
    summary = occubench.run(config, console=Console(quiet=True))
    assert summary.errors == 0
    return {(str(r.task_id), r.trial): r for r in summary.results}


def _theirs(log: EvalLog) -> dict[tuple[str, int], Result]:
    assert log.status == "success", log.error
    return {(str(r.task_id), r.trial): r for r in read_log(Path(log.location))}


def _same_verdicts(ours: dict[tuple[str, int], Result], theirs: dict[tuple[str, int], Result]) -> None:
    assert set(theirs) == set(ours) and ours
    for key, result in ours.items():
        other = theirs[key]
        assert (other.status, other.is_correct, other.trajectory, other.final_answer, other.stop_reason) == \
            (result.status, result.is_correct, result.trajectory, result.final_answer, result.stop_reason), key
        assert [(v.is_correct, v.feedback) for v in other.votes] == [(v.is_correct, v.feedback) for v in result.votes]
        assert other.fault_events == result.fault_events and other.verdict_details == result.verdict_details


@pytest.mark.parametrize(("mode", "fault_mode"), [("E0", None), ("E2", None), ("E1", "harness")])
def test_the_simulated_suite_gives_occubench_run_s_verdicts(tmp_path: Path, server: MockLLMServer, mode: str,
                                                             fault_mode: str | None) -> None:
    data = write_small_data(tmp_path / "data", copies=2)
    settings = {"env_mode": mode, "fault_mode": fault_mode, "fault_count": 2, "fault_duration": 1}
    log = _inspect(occubench_task(data_dir=str(data), date=DATE, **settings), server, tmp_path / "logs",
                   roles=("world", "grader"))
    ours = _ours(tmp_path, server, data_dir=str(data), world_model="gpt-4o-mini", **settings)
    _same_verdicts(ours, _theirs(log))
    assert {r.is_correct for r in ours.values()} == {True, False}  # the scripted judge passes some, fails others
    if fault_mode == "harness":
        assert any(r.fault_events for r in ours.values())
    sample = log.samples[0]
    score = sample.scores["verdict"]
    assert set(sample.metadata) == {"scenario", "category", "domain", "difficulty", "world"}
    assert len(score.metadata["votes"]) == 3 and score.explanation == score.metadata["votes"][0]["feedback"]
    # The simulator and the judge were the roles' model, through Inspect.
    assert set(sample.role_usage) == {"world", "grader"}


def test_without_a_grader_the_world_model_judges_and_without_a_world_model_the_task_says_so(
        tmp_path: Path, server: MockLLMServer) -> None:
    data = write_small_data(tmp_path / "data")
    log = _inspect(occubench_task(data_dir=str(data), date=DATE), server, tmp_path / "a", roles=("world",))
    assert all(r.verifier_model == r.world_model == "openai/gpt-4o-mini" and r.ok for r in _theirs(log).values())
    [failed] = inspect_eval(occubench_task(data_dir=str(data)), model=_model(server, "gpt-4o"),
                            log_dir=str(tmp_path / "b"), display="none")
    assert failed.status == "error" and "--model-role world=" in str(failed.error)


@pytest.mark.parametrize("mode", ["E0", "E1"])
def test_the_executable_worlds_give_occubench_run_s_verdicts_and_labels(tmp_path: Path, server: MockLLMServer,
                                                                         mode: str) -> None:
    settings = {"env_mode": mode, "fault_count": 1, "fault_duration": 2}
    log = _inspect(executable(world="insurance_claims,clinic_scheduling", date=DATE, **settings), server,
                   tmp_path / "logs", roles=("grader",))
    ours = _ours(tmp_path, server, suite="executable", verifier_model="gpt-4o-mini",
                 task_ids=sorted(str(s.id) for s in log.samples), **settings)
    _same_verdicts(ours, _theirs(log))
    assert all("checks" in r.verdict_details and r.verdict_details.get("judge_label") for r in ours.values())


def test_workplace_days_give_occubench_run_s_scores(tmp_path: Path, server: MockLLMServer) -> None:
    log = _inspect(workplace(days=2, seed=7, date=DATE, max_steps=12), server, tmp_path / "logs",
                   roles=("colleague",))
    ours = _ours(tmp_path, server, suite="workplace", days=2, seed=7, max_steps=12, npc_model="gpt-4o-mini")
    _same_verdicts(ours, _theirs(log))
    score = log.samples[0].scores["day_score"]
    assert score.value == {"score": ours[(str(log.samples[0].id), 0)].verdict_details["day_score"],
                           "success": float(ours[(str(log.samples[0].id), 0)].is_correct)}


def test_epochs_reduce_to_pass_at_k_and_pass_hat_k(tmp_path: Path, server: MockLLMServer) -> None:
    data = write_small_data(tmp_path / "data", copies=2)
    log = _inspect(occubench_task(data_dir=str(data), date=DATE, epochs=2), server, tmp_path / "logs",
                   roles=("world",))
    results = _theirs(log)
    assert {trial for _, trial in results} == {0, 1}
    by_task: dict[str, list[bool]] = {}
    for (task, _), result in results.items():
        by_task.setdefault(task, []).append(bool(result.is_correct))
    reducers = {s.reducer: s.metrics["accuracy"].value for s in log.results.scores} if log.results else {}
    expected = {"pass_at_2": pass_at_k, "pass_k_2": pass_hat_k}
    assert set(reducers) == {"mean", *expected}
    for name, estimate in expected.items():
        mean = sum(estimate(len(v), sum(v), 2) for v in by_task.values()) / len(by_task)
        assert reducers[name] == pytest.approx(mean)
    assert reducers["mean"] == pytest.approx(sum(r.passed for r in results.values()) / len(results))


def _hostile_agent(request: dict, index: int) -> str | dict:
    """An agent that calls a tool that does not exist, then one with arguments of the wrong type, then answers."""
    if not request.get("tools"):
        return scripted_responder(request, index)
    done = sum(1 for m in request.get("messages", []) if m.get("role") == "tool")
    first = request["tools"][0]["function"]
    moves = [{"name": "delete_everything", "arguments": {"really": True}},
             {"name": first["name"], "arguments": dict.fromkeys(first["parameters"]["properties"], 12345)}]
    if done < len(moves):
        return {"content": None, "tool_calls": [moves[done]]}
    return "I could not finish."


def test_hostile_calls_never_reach_the_world_and_are_judged_alike(tmp_path: Path) -> None:
    data = write_small_data(tmp_path / "data")
    with MockLLMServer(_hostile_agent) as server:
        log = _inspect(occubench_task(data_dir=str(data), date=DATE), server, tmp_path / "logs", roles=("world",))
        ours = _ours(tmp_path, server, data_dir=str(data), world_model="gpt-4o-mini")
    theirs = _theirs(log)
    for key, result in ours.items():
        mine, other = result.tool_calls, theirs[key].tool_calls
        assert [c.name for c in other] == [c.name for c in mine]
        assert other[0].observation == mine[0].observation == unknown_tool("delete_everything", _specs(key[0], data))
        assert other[1].observation["error"] == mine[1].observation["error"] == "invalid_arguments"
        assert other[0].call_index is other[1].call_index is None  # neither reached the world
        assert theirs[key].is_correct == result.is_correct


def _specs(task_id: str, data: Path) -> list:
    from occubench.simulated.config import WorldModelRegistry
    from occubench.simulated.tasks import load_tasks

    tasks = {str(t.task_id): t for t in load_tasks(data / "eval_benchmark_solvable.jsonl",
                                                   data / "task_scenario_all_pool.jsonl")}
    return WorldModelRegistry(data / "world_model_configs").get(tasks[task_id].env_name).specs


def test_an_environment_failure_is_a_sample_error_not_a_failed_task(tmp_path: Path) -> None:
    data = write_small_data(tmp_path / "data")
    # The simulator never gives a parsable observation: the world cannot answer (not the agent's doing).
    with MockLLMServer(make_scripted_responder(malformed_rate=1.0)) as server:
        [log] = inspect_eval(occubench_task(data_dir=str(data)), model=_model(server, "gpt-4o"),
                             model_roles={"world": _model(server, "gpt-4o-mini")}, log_dir=str(tmp_path / "logs"),
                             display="none", fail_on_error=False)
    assert all(sample.error is not None and not sample.scores for sample in log.samples)
    results = read_log(Path(log.location))
    assert results and all(r.status == "error" and r.is_correct is None and r.error and
                           r.error.kind == "environment" for r in results)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_inspect_eval_from_the_command_line_then_inspect_view_and_occubench_report(
        tmp_path: Path, server: MockLLMServer, capsys: pytest.CaptureFixture[str]) -> None:
    """As a user runs it: the entry point registers the task, the log opens in ``inspect view``, and ``occubench
    report`` reads the log directory."""
    env = {**os.environ, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}
    logs = tmp_path / "logs"
    done = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "occubench/executable", "--model",
                           "openai/gpt-4o", "-T", "world=insurance_claims", "--log-dir", str(logs), "--display",
                           "none"], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    # (Not from the checkout's root, where occubench/executable is a folder: Inspect takes an existing path first.)
    assert done.returncode == 0, done.stderr[-2000:]
    [log] = logs.glob("*.eval")
    port = _free_port()
    view = subprocess.Popen([sys.executable, "-m", "inspect_ai", "view", "--log-dir", str(logs), "--port",
                             str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        listed = _poll(f"http://127.0.0.1:{port}/api/log-files")
        assert log.name in json.dumps(listed)
        opened = _poll(f"http://127.0.0.1:{port}/api/logs/{log.resolve().as_uri()}")
        assert opened["status"] == "success" and len(opened["samples"]) == 3
    finally:
        view.terminate()
        view.wait(timeout=30)
    assert cli(["report", str(logs), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    [run] = report["runs"]
    assert report["leaderboard"] == [log.name] == [run["name"]]
    assert (run["suite"], run["agent_model"], run["completion"]["evaluated"]) == ("executable", "openai/gpt-4o", 3)
    assert run["usage"]["agent"]["prompt_tokens"] > 0


def _poll(url: str) -> Any:
    for _ in range(240):  # the server takes a few seconds to start; give up after about a minute
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return json.load(answer)
        except OSError:
            time.sleep(0.25)
    raise AssertionError(f"inspect view never answered {url}")
