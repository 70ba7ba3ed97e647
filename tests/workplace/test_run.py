"""Workplace days through the same harness: scripted agents, LLM agent and colleagues over a loopback server,
and the day-one → day-two learning run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from occubench.cli import run as evaluate
from occubench.store import read_results
from occubench.testing import MockLLMServer
from occubench.workplace.generate import generate_day
from occubench.workplace.plugin import day_category
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
    assert all(task["success"] and task["points"] == task["full"] and not task["notes"]
               for task in record["verdict_details"]["task_scores"])
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
                return {"content": None, "tool_calls": [{"name": "list_users", "arguments": {}}]}
            if done == 1:
                return {"content": None, "tool_calls": [{"name": "send_message", "arguments": {
                    "to": "everyone-i-know", "text": "What is the approval threshold?"}}]}
            return {"content": None, "tool_calls": [{"name": "done", "arguments": {"notes": "ask first"}}]} \
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
    assert observation["error"] == "tool_error" and "nobody is called" in observation["message"]


def test_two_day_learning_run_reports_the_gain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, records = run(tmp_path, "--agent", "reference", "--days", "3", "--seed", "9", "--learning")
    assert code == 0
    # A scripted agent has no model to reflect with: two arms, and the run says why.
    assert "without the reflection arm" in capsys.readouterr().err.replace("\n", " ")
    ids = sorted(r["task_id"] for r in records)
    assert ids == sorted([f"s9-d00{i}" for i in (1, 2, 3)] +
                         [f"s9-d00{i}-day2-{arm}" for i in (1, 2, 3) for arm in ("none", "notes")])
    code, _ = run(tmp_path, "--agent", "reference", "--days", "3", "--seed", "9", "--learning")
    err = capsys.readouterr().err.replace("\n", " ")
    assert code == 0 and "3 already done, 0 to run" in err and "6 already done, 0 to run" in err


def _learning_responder(reflection: str) -> Callable[[dict, int], str | dict]:
    """An agent that leaves a note and finishes its day; a reflection that answers ``reflection``."""
    def responder(request: dict, index: int) -> str | dict:
        if "<notes>" in request["messages"][0]["content"]:
            return reflection
        if sum(m["role"] == "tool" for m in request["messages"]) == 0:
            return {"content": None, "tool_calls": [{"name": "done", "arguments": {"notes": "Ask Finance."}}]}
        return "Done."
    return responder


def test_three_arms_start_day_two_with_what_they_are_told(tmp_path: Path) -> None:
    with MockLLMServer(_learning_responder("<notes>Ask whoever owns a figure before using it.</notes>")) as server:
        code, records = run(tmp_path, "--agent-model", "agent", "--base-url", server.base_url, "--days", "1",
                            "--seed", "2", "--learning")
    assert code == 0
    by_id = {r["task_id"]: r for r in records}
    assert set(by_id) == {"s2-d001", *(f"s2-d001-day2-{arm}" for arm in ("none", "notes", "reflection"))}
    first = by_id["s2-d001"]["verdict_details"]
    # The agent's own model reflected (without --reflection-model), its tokens counted apart from the agent's.
    assert first["reflection_model"] == "agent" and first["reflection_notes"] == \
        "Ask whoever owns a figure before using it."
    assert set(by_id["s2-d001"]["usage"]) == {"agent", "reflection"}
    assert all(by_id[f"s2-d001-day2-{arm}"]["verdict_details"]["arm"] == arm for arm in ("none", "notes", "reflection"))

    reflections = [r for r in server.requests if "<notes>" in r["messages"][0]["content"]]
    assert len(reflections) == 1 and reflections[0]["model"] == "agent"
    read = reflections[0]["messages"][1]["content"]
    assert "done" in read and "Mentor's feedback" in read and " points" in read
    answers = {str(value) for task in generate_day(2, 1).tasks for c in task.checkpoints
               for value in c.check.get("values", [])}
    assert answers and not any(answer in read for answer in answers)  # the feedback, never the answers

    instructions = [r["messages"][1]["content"] for r in agent_requests(server) if len(r["messages"]) == 2]
    assert len(instructions) == 4  # day one and the three arms of day two
    carried = [text.partition("From your previous working day:")[2] for text in instructions]
    assert sum(not text for text in carried) == 2  # day one, and day two told nothing
    notes = [text for text in carried if "Mentor's feedback" in text]
    assert len(notes) == 1 and "Ask Finance." in notes[0] and not any(answer in notes[0] for answer in answers)
    reflected = [text for text in carried if "reflecting" in text]
    assert len(reflected) == 1 and "Ask whoever owns a figure before using it." in reflected[0]
    assert "Mentor's feedback" not in reflected[0]


def test_a_reflection_model_of_its_own_and_a_hostile_reflection(tmp_path: Path) -> None:
    # A reply without the tags, a lone surrogate and far too long: the notes are kept, cleaned and cut.
    hostile = "Keep lists short. \ud800" + "x" * 200_000
    with MockLLMServer(_learning_responder(hostile)) as server:
        code, records = run(tmp_path, "--agent-model", "agent", "--reflection-model", "critic", "--base-url",
                            server.base_url, "--days", "1", "--seed", "3", "--learning")
    assert code == 0 and all(r["status"] == "ok" for r in records) and len(records) == 4
    assert {r["model"] for r in server.requests if "<notes>" in r["messages"][0]["content"]} == {"critic"}
    notes = next(r for r in records if r["task_id"] == "s3-d001")["verdict_details"]["reflection_notes"]
    assert notes.startswith("Keep lists short. \ufffd") and len(notes) < 5_000 and "characters cut" in notes


def test_learning_settings_that_cannot_hold_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for flags, named in ((["--learning", "--trials", "2"], "--trials 1"),
                         (["--agent-model", "a", "--reflection-model", "b"], "add --learning")):
        code, _ = run(tmp_path, "--agent", "reference", "--days", "1", *flags)
        assert code == 2 and named in capsys.readouterr().err.replace("\n", " ")
    assert not (tmp_path / "r").exists()


def test_a_reflection_that_fails_is_an_error_not_a_score(tmp_path: Path) -> None:
    with MockLLMServer(_learning_responder("<notes>n</notes>"), models=["agent"]) as server:
        code, records = run(tmp_path, "--agent-model", "agent", "--reflection-model", "gone", "--base-url",
                            server.base_url, "--days", "2", "--seed", "3", "--learning", "--skip-preflight")
    assert code == 1 and len(records) == 2  # no day two without a day one
    assert all(r["status"] == "error" and r["is_correct"] is None and r["error"]["kind"] == "request_rejected"
               for r in records)


def test_harness_faults_apply_to_workplace_days(tmp_path: Path) -> None:
    code, records = run(tmp_path, "--agent", "reference", "--days", "4", "--seed", "4", "--env-mode", "E1",
                        "--fault-count", "2", "--fault-duration", "2")
    assert code == 0
    assert all(r["fault_mode"] == "harness" and len(r["fault_events"]) == 4 for r in records)
    # The scripted reference does not retry what failed.
    assert any(r["verdict_details"]["day_score"] < 1 for r in records)
