"""`occubench run --suite awm`: the published sample run with the project's mock as agent and judge, every
runnable task recorded with its verdict and the mode that decided it; a verifier that does not compile is the
task's environment error, never the agent's score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from occubench import load_results
from occubench.awm.data import FILES
from occubench.cli import main
from occubench.core.faults import fault_schedule
from occubench.testing import MockLLMServer
from occubench.testing.responders import scripted_responder
from tests.awm.conftest import sha256sum_digest
from tests.awm.test_service import PURE


def _run(data: Path, out: Path, *task_ids: str) -> int:
    with MockLLMServer() as server:
        return main(["run", "--suite", "awm", "--data-dir", str(data), "--agent-model", "agent", "--verifier-model",
                     "judge", "--base-url", server.base_url, "--api-key", "k", "--output-dir", str(out),
                     "--run-name", "r", "--task-ids", *task_ids])


def test_runnable_tasks_get_a_verdict_and_its_mode(data: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(data, tmp_path / "out", "content_platform_1/0", "code_hosting_2/3") == 0
    results = load_results(tmp_path / "out" / "r" / "results.jsonl")
    assert {r.task_id for r in results} == {"content_platform_1/0", "code_hosting_2/3"}
    # No verifier for these in the sample: the judge decides from the task's text, and says so.
    assert all(r.ok and r.is_correct is not None and r.verdict_details["verification_mode"] == "judge"
               for r in results)
    assert any(call.name and "error" not in call.observation for r in results for call in r.tool_calls)
    said = " ".join(capsys.readouterr().err.split())
    assert "e_commerce_33: not run (no application" in said
    # The run's identity holds the content digest of the files it read.
    args = json.loads((tmp_path / "out" / "r" / "args.json").read_text())
    assert args["config"]["task_content"] == sha256sum_digest(data) and args["data_dir"] == str(data)


def test_a_pure_verifier_decides_and_one_that_does_not_compile_is_an_error(data: Path, tmp_path: Path) -> None:
    lines = [{"scenario": "content_platform_1", "task_idx": 0, "verification": {"code": PURE}},
             {"scenario": "content_platform_1", "task_idx": 1, "verification": {"code": "def verify_task(:"}}]
    (data / FILES["pure_verifier"]).write_text(json.dumps(lines[0]) + "\n")
    (data / FILES["verifier"]).write_text(json.dumps(lines[1]) + "\n")
    # Exit status 1: an episode ended in an error (it is retried by the next run, as any error is).
    assert _run(data, tmp_path / "out", "content_platform_1/0", "content_platform_1/1") == 1
    results = {r.task_id: r for r in load_results(tmp_path / "out" / "r" / "results.jsonl")}
    pure, broken = results["content_platform_1/0"], results["content_platform_1/1"]
    assert pure.ok and pure.verdict_details["verification_mode"] == "pure_code" and pure.is_correct is False
    assert broken.status == "error" and broken.error is not None and broken.is_correct is None
    assert broken.error.kind == "environment" and "does not compile" in broken.error.message


def test_harness_faults_hit_awm_calls_as_any_world_s(data: Path, tmp_path: Path) -> None:
    # The mock agent makes two calls: a seed whose one window is on the second (call 1).
    seed = next(seed for seed in range(100)
                if fault_schedule("E1", 1, 1, seed, "content_platform_1/0")[0].first_call == 1)
    with MockLLMServer() as server:
        code = main(["run", "--suite", "awm", "--data-dir", str(data), "--agent-model", "agent", "--verifier-model",
                     "judge", "--base-url", server.base_url, "--api-key", "k", "--output-dir", str(tmp_path / "out"),
                     "--run-name", "r", "--task-ids", "content_platform_1/0", "--env-mode", "E1", "--fault-count",
                     "1", "--fault-duration", "1", "--seed", str(seed)])
    assert code == 0
    [result] = load_results(tmp_path / "out" / "r" / "results.jsonl")
    assert (result.fault_mode, result.env_mode) == ("harness", "E1") and result.fault_windows
    faulted = {event.call_index for event in result.fault_events}
    assert faulted and all(call.observation.get("error") for call in result.tool_calls
                           if call.call_index in faulted)


def subscribing(request: dict, index: int) -> str | dict:
    """An agent that subscribes to channel 1 and answers; the judge as the project's mock plays it."""
    if not request.get("tools"):
        return scripted_responder(request, index)
    if any(message.get("role") == "tool" for message in request["messages"]):
        return "Final answer: subscribed."
    return {"content": None, "tool_calls": [{"name": "subscribe_to_channel", "arguments": {"channel_id": 1}}]}


def test_the_result_holds_what_the_episode_changed_in_its_database(data: Path, tmp_path: Path) -> None:
    with MockLLMServer(subscribing) as server:
        assert main(["run", "--suite", "awm", "--data-dir", str(data), "--agent-model", "agent", "--verifier-model",
                     "judge", "--base-url", server.base_url, "--api-key", "k", "--output-dir", str(tmp_path / "out"),
                     "--run-name", "r", "--task-ids", "content_platform_1/0"]) == 0
    [result] = load_results(tmp_path / "out" / "r" / "results.jsonl")
    inserted = result.verdict_details["state_diff"]["user_subscriptions"]["inserted"]
    assert [row["channel_id"] for row in inserted] == [1]  # the viewer shows it as any executable world's diff


def test_a_verifier_s_huge_report_is_clipped_and_its_result_kept(data: Path, tmp_path: Path) -> None:
    code = ("def verify_task_completion(initial_db_path, final_db_path, final_answer=None):\n"
            "    return {'result': 'complete', 'evidence': ['x' * 1000] * 20000, 'deep': eval('[' * 60 + ']' * 60)}\n")
    line = {"scenario": "content_platform_1", "task_idx": 0, "verification": {"code": code}}
    (data / FILES["pure_verifier"]).write_text(json.dumps(line) + "\n")
    assert _run(data, tmp_path / "out", "content_platform_1/0") == 0
    [result] = load_results(tmp_path / "out" / "r" / "results.jsonl")
    assert result.is_correct is True and result.verdict_details["verifier"]["result"] == "complete"
    assert len(json.dumps(result.verdict_details["verifier"])) < 25_000
    assert (tmp_path / "out" / "r" / "results.jsonl").stat().st_size < 1 << 20
