"""JSON nested 100,000 levels deep, from any role, is that role's unparsable reply: asked again, then recorded as
that role's error (or, from the agent, an ``invalid_arguments`` observation) — never a RecursionError, never a
``tool_failed`` observation the agent could pass with, never an ``internal`` error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from occubench.cli import main as cli
from occubench.core.tools import json_arguments
from occubench.llm.parsing import MAX_DEPTH, extract_tagged_json, loads
from occubench.store import RESULTS_FILE, read_results
from occubench.testing import MockLLMServer

QUIET = Console(quiet=True)


def nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


DEEP = nested(100_000)


def test_nesting_beyond_the_bound_is_a_value_error_everywhere_model_json_is_read() -> None:
    assert loads(nested(MAX_DEPTH)) is not None
    assert loads('{"text": "' + "[" * 10_000 + '"}') == {"text": "[" * 10_000}  # brackets in a string do not nest
    for text in (nested(MAX_DEPTH + 1), DEEP):
        with pytest.raises(ValueError, match="nested more than 256 levels"):
            loads(text)
        with pytest.raises(ValueError, match="not valid JSON"):
            extract_tagged_json(f"<verdict>{text}</verdict>", "verdict")
        with pytest.raises(ValueError, match="nesting too deep"):
            json_arguments(text)


def run_against(server: MockLLMServer, data: Path, out: Path, *extra: str) -> list[dict[str, Any]]:
    code = cli(["run", "--agent-model", "a", "--world-model", "w", "--base-url", server.base_url, "--data-dir",
                str(data), "--output-dir", str(out), "--run-name", "r", "--retry-budget", "2", *extra])
    assert code in (0, 1)
    return sorted(read_results(out / "r" / RESULTS_FILE), key=lambda r: r["task_id"])


def test_a_deep_observation_is_the_simulator_s_error_after_its_re_asks(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer(deep_nesting=["world"]) as server:
        results = run_against(server, small_data, tmp_path)
        world = [r for r in server.requests if "<predicted_observation>" in r["messages"][0]["content"]]
    assert [(r["status"], r["error"]["kind"]) for r in results] == [("error", "environment")] * 3
    assert "nested more than 256 levels deep" in results[0]["error"]["message"]
    assert len(world) == 3 * 3  # each task's first call: asked, then asked again twice
    reasks = [r["messages"][-1]["content"] for r in world if len(r["messages"]) > 2]
    assert len(reasks) == 3 * 2 and all("nested more than 256 levels deep" in text for text in reasks)


def test_a_deep_verdict_is_left_out_and_no_majority_is_a_verifier_error(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer(deep_nesting=["verifier"]) as server:
        results = run_against(server, small_data, tmp_path)
    assert [(r["status"], r["error"]["kind"]) for r in results] == [("error", "verifier")] * 3
    assert [v["is_correct"] for v in results[0]["votes"]] == [None, None, None]
    assert all(v["attempts"] == 3 and "nested more than 256" in v["feedback"] for v in results[0]["votes"])


@pytest.mark.slow
def test_deep_tool_call_arguments_are_invalid_arguments_the_agent_sees(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer(deep_nesting=["agent"]) as server:
        results = run_against(server, small_data, tmp_path)
    assert [r["status"] for r in results] == ["ok"] * 3
    observations = [c["observation"] for r in results for s in r["steps"] for c in s["tool_calls"]]
    assert observations and {o["error"] for o in observations} == {"invalid_arguments"}
    assert "nesting too deep" in observations[0]["message"]


def test_a_deep_text_tool_call_is_no_tool_call_as_other_garbage(small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer(deep_nesting=["agent"], text_tool_calls=True) as server:
        results = run_against(server, small_data, tmp_path)
    # A <tool_call> block that cannot be read is text, as an unreadable block always was: the agent's answer.
    assert [(r["status"], r["stop_reason"], r["step_count"]) for r in results] == [("ok", "answer", 1)] * 3


def test_a_deep_http_body_is_a_malformed_answer_retried_then_infrastructure(small_data: Path,
                                                                            tmp_path: Path) -> None:
    with MockLLMServer(deep_nesting=["body"]) as server:
        results = run_against(server, small_data, tmp_path, "--skip-preflight", "--max-workers", "3")
    assert [(r["status"], r["error"]["kind"]) for r in results] == [("error", "infrastructure")] * 3
    assert "malformed response" in results[0]["error"]["message"]
    assert "nested more than 256" in results[0]["error"]["message"]


def test_a_deep_synthesis_answer_is_asked_again_then_the_stage_fails(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    with MockLLMServer(deep_nesting=["synth"]) as server:
        code = cli(["synth", "simulated", "--out", str(tmp_path / "out"), "--synth-model", "s", "--agent-model", "a",
                    "--world-model", "w", "--base-url", server.base_url, "--scenario", "KYC review",
                    "--category", "Finance", "--tasks-per-scenario", "2", "--runs", "1"])
        stages = [r for r in server.requests if r["messages"][0]["content"].startswith("Stage: ")]
    printed = capsys.readouterr()
    assert code != 0 and "nested more than 256 levels deep" in printed.out + printed.err
    assert len(stages) == 3  # the first stage, asked three times
    assert all("nested more than 256 levels deep" in r["messages"][-1]["content"] for r in stages[1:])
