"""Workplace days through the same harness: scripted agents, LLM agent and colleagues over a loopback server,
and the day-one → day-two learning run."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench import evaluate
from occubench.store import read_results
from occubench.testing import MockLLMServer
from occubench.workplace.generate import generate_day
from occubench.workplace.suite import day_category
from occubench.workplace.templates import FAMILIES
from tests.conftest import agent_requests


def run(tmp_path: Path, *args: str) -> tuple[int, list[dict]]:
    code = evaluate.main(["--suite", "workplace", "--output-dir", str(tmp_path), "--run-name", "r", *args])
    return code, read_results(tmp_path / "r" / "results.jsonl")


def test_reference_completes_every_day_and_noop_scores_zero(tmp_path: Path) -> None:
    code, reference = run(tmp_path / "a", "--agent", "reference", "--days", "8", "--seed", "4")
    assert code == 0 and len(reference) == 8
    assert all(r["is_correct"] and r["verdict_details"]["day_score"] == 1 for r in reference)
    _, noop = run(tmp_path / "b", "--agent", "noop", "--days", "8", "--seed", "4")
    assert all(r["verdict_details"]["day_score"] == 0 and not r["is_correct"] for r in noop)
    record = reference[0]
    assert record["suite"] == "workplace"
    assert {"task_scores", "n_tasks", "day_feedback"} <= set(record["verdict_details"])
    assert all(c["passed"] for task in record["verdict_details"]["task_scores"] for c in task["checkpoints"])
    for result in reference:  # each task keeps its family's industry; the day files under its most common one
        scores = result["verdict_details"]["task_scores"]
        assert all(task["category"] == FAMILIES[task["family"]].category for task in scores)
        assert result["category"] == day_category(generate_day(4, int(result["task_id"][-3:])))
    assert len({r["category"] for r in reference}) > 1


def test_an_llm_agent_with_llm_colleagues(tmp_path: Path) -> None:
    def responder(request: dict, index: int) -> str | dict:
        if request.get("tools"):
            done = sum(m["role"] == "tool" for m in request["messages"])
            if done == 0:
                return {"content": None, "tool_calls": [{"name": "list_colleagues", "arguments": {}}]}
            if done == 1:
                return {"content": None, "tool_calls": [{"name": "send_message", "arguments": {
                    "to": "everyone-i-know", "text": "What is the approval threshold?"}}]}
            return {"content": None, "tool_calls": [{"name": "finish_day", "arguments": {"notes": "ask first"}}]} \
                if done == 2 else "Done."
        return "I am a colleague played by a model."
    with MockLLMServer(responder) as server:
        code, records = run(tmp_path, "--agent-model", "agent", "--npc-model", "npc", "--base-url", server.base_url,
                            "--days", "2", "--seed", "4")
    assert code == 0 and len(records) == 2
    for record in records:
        assert 0 <= record["verdict_details"]["day_score"] < 1 and record["env_info"]["day_notes"] == "ask first"
        # Usage is counted per role that made requests: no colleague was reached (the group does not exist).
        assert set(record["usage"]) == {"agent"}
    # The message went to a group that does not exist: the agent got a clear error, not a crash.
    observation = records[0]["steps"][1]["tool_calls"][0]["observation"]
    assert observation["error"] == "tool_error" and "nobody called" in observation["message"]


def test_two_day_learning_run_reports_the_gain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, records = run(tmp_path, "--agent", "reference", "--days", "3", "--seed", "9", "--learning",
                        "--with-notes")
    assert code == 0
    ids = sorted(r["task_id"] for r in records)
    assert ids == sorted([f"s9-d00{i}" for i in (1, 2, 3)] + [f"s9-d00{i}-day2" for i in (1, 2, 3)])
    out = capsys.readouterr().out
    assert "Day one → day two" in out and "+0.0 pts" in out  # the reference is perfect on both days
    code, _ = run(tmp_path, "--agent", "reference", "--days", "3", "--seed", "9", "--learning", "--with-notes")
    assert code == 0 and capsys.readouterr().err.replace("\n", " ").count("3 already done, 0 to run") == 2


def test_day_two_starts_with_the_feedback_of_day_one(tmp_path: Path) -> None:
    def responder(request: dict, index: int) -> str | dict:
        if sum(m["role"] == "tool" for m in request["messages"]) == 0:
            return {"content": None, "tool_calls": [{"name": "finish_day", "arguments": {"notes": "Ask Finance."}}]}
        return "Done."
    with MockLLMServer(responder) as server:
        code, records = run(tmp_path, "--agent-model", "agent", "--base-url", server.base_url, "--days", "1",
                            "--seed", "2", "--learning", "--with-notes")
    assert code == 0
    day_two = [r for r in agent_requests(server) if "previous working day" in r["messages"][1]["content"]]
    assert day_two
    carried = day_two[0]["messages"][1]["content"]
    assert "Mentor's feedback" in carried and "checkpoint(s) missed" in carried and "Ask Finance." in carried
    answers = {str(value) for task in generate_day(2, 1).tasks for c in task.checkpoints
               for value in c.check.get("values", [])}
    assert answers and not any(answer in carried for answer in answers)  # feedback, not the answers


def test_harness_faults_apply_to_workplace_days(tmp_path: Path) -> None:
    code, records = run(tmp_path, "--agent", "reference", "--days", "4", "--seed", "4", "--env-mode", "E1",
                        "--fault-count", "2", "--fault-duration", "2")
    assert code == 0
    assert all(r["fault_mode"] == "harness" and len(r["fault_events"]) == 4 for r in records)
    # The scripted reference does not retry what failed.
    assert any(r["verdict_details"]["day_score"] < 1 for r in records)
