"""The acceptance of tracing, in a real Arize Phoenix (its own server, from its peer virtualenv), read back through
Phoenix's own client: the executable and the LLM-simulated suite run against the mock with tracing on, and a run on
Ray; one trace per episode, the model and tool spans with their attributes, an evaluation event whose score is
results.jsonl's verdict; no key in anything Phoenix stored, though the agent's reply quoted it and message content
was captured."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from occubench import telemetry
from occubench.cli import run as evaluate
from occubench.store import read_results
from occubench.testing import MockLLMServer
from tests.telemetry.phoenix import Phoenix
from tests.telemetry.test_spans import KEY, TASKS, agent

pytestmark = pytest.mark.slow  # Phoenix takes seconds to start


def traced_run(phoenix: Phoenix, monkeypatch: pytest.MonkeyPatch, args: list[str], out: Path,
               server: MockLLMServer) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``occubench run ARGS`` traced to a project of its own in Phoenix: its results and the spans Phoenix stored,
    once every episode's trace is there."""
    project = f"occubench-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix.url)
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")  # Phoenix takes traces only
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={project}")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    try:
        code = evaluate.main([*args, "--base-url", server.base_url, "--api-key", KEY, "--output-dir", str(out),
                              "--run-name", "r"])
    finally:
        telemetry.configure(False)
    assert code in (0, 1)
    results = read_results(out / "r" / "results.jsonl")

    def whole(spans: list[dict[str, Any]]) -> bool:  # every episode's root and its verdict have arrived
        return sum(span["name"].startswith("episode ") for span in spans) == len(results)
    return results, phoenix.spans(project, until=whole)


def check(results: list[dict[str, Any]], spans: list[dict[str, Any]], roles: set[str], suite: str) -> None:
    by_episode = {(r["task_id"] if isinstance(r["task_id"], str) else str(r["task_id"]), r["trial"]): r
                  for r in results}
    roots = [span for span in spans if span["parent_id"] is None]
    assert len(roots) == len(results) and len({root["trace_id"] for root in roots}) == len(results)
    for root in roots:
        attributes = root["attributes"]
        result = by_episode[(attributes["occubench.task"], attributes["occubench.trial"])]
        assert attributes["occubench.suite"] == suite and attributes["occubench.run"] == "r"
        assert attributes["occubench.config_hash"] == result["config_hash"]
        assert attributes["occubench.fault_level"] == result["env_mode"]
        [verdict] = [event["attributes"] for event in root["events"] if event["name"] == "gen_ai.evaluation.result"]
        assert verdict["gen_ai.evaluation.score.value"] == float(result["is_correct"])
        trace = sorted((span for span in spans if span["trace_id"] == root["trace_id"]),
                       key=lambda span: span["start_time"])
        chats = [span["attributes"] for span in trace if span["attributes"].get("gen_ai.operation.name") == "chat"]
        assert {chat["occubench.role"] for chat in chats} == roles
        for chat in chats:
            assert chat["gen_ai.request.model"] and chat["gen_ai.response.model"]
            assert chat["gen_ai.usage.input_tokens"] > 0 and chat["gen_ai.response.finish_reasons"]
        # The agent's and the judges' tokens, span by span, add up to the episode's usage in results.jsonl.
        for role, usage in result["usage"].items():
            spent = sum(chat["gen_ai.usage.input_tokens"] for chat in chats
                        if chat["occubench.role"] == {"verifier": "judge"}.get(role, role))
            assert spent == usage["prompt_tokens"], role
        tools = [span["attributes"] for span in trace if span["attributes"].get("gen_ai.operation.name") ==
                 "execute_tool"]
        assert [tool["gen_ai.tool.name"] for tool in tools] == \
            [call["name"] for step in result["steps"] for call in step["tool_calls"]]
        assert all(tool["occubench.tool.outcome"] for tool in tools)
        assert sum(tool["occubench.fault.injected"] for tool in tools) == len(result["fault_events"])


def no_key(phoenix: Phoenix, spans: list[dict[str, Any]]) -> None:
    assert KEY not in json.dumps(spans)
    stored = [path for path in phoenix.folder.rglob("*") if path.is_file()]
    assert stored and not any(KEY.encode() in path.read_bytes() for path in stored)


def test_the_executable_suite_s_episodes_in_phoenix(phoenix: Phoenix, monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    with MockLLMServer(agent, api_key=KEY) as server:
        results, spans = traced_run(phoenix, monkeypatch, [
            "--suite", "executable", "--agent-model", "m", "--verifier-model", "judge", "--task-ids", TASKS,
            "--env-mode", "E1", "--fault-count", "1", "--fault-duration", "1"], tmp_path, server)
    check(results, spans, {"agent", "judge"}, "executable")
    # The executable suite's judge labels the work once; it casts no votes.
    assert not any(event["name"] == "occubench.judge.vote" for span in spans for event in span["events"])
    no_key(phoenix, spans)


def test_the_simulated_suite_s_episodes_in_phoenix(phoenix: Phoenix, monkeypatch: pytest.MonkeyPatch,
                                                   small_data: Path, tmp_path: Path) -> None:
    with MockLLMServer(api_key=KEY) as server:  # the mock plays the agent, the world model and the judge
        results, spans = traced_run(phoenix, monkeypatch, [
            "--agent-model", "a", "--world-model", "w", "--verifier-model", "v", "--data-dir", str(small_data),
            "--env-mode", "E1", "--fault-count", "1", "--fault-duration", "1"], tmp_path, server)
    check(results, spans, {"agent", "world", "judge"}, "occubench")
    votes = [event for span in spans for event in span["events"] if event["name"] == "occubench.judge.vote"]
    assert len(votes) == sum(len(result["votes"]) for result in results) > 0
    # A world model's answer is a child of the tool call it answers.
    parents = {span["span_id"]: span for span in spans}
    worlds = [span for span in spans if span["attributes"].get("occubench.role") == "world"]
    assert worlds and all(parents[span["parent_id"]]["attributes"]["gen_ai.operation.name"] == "execute_tool"
                          for span in worlds)
    no_key(phoenix, spans)


def test_a_ray_run_s_episodes_in_phoenix(phoenix: Phoenix, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The workers take the run's OTEL_* variables: each episode one trace, whichever worker ran it.
    with MockLLMServer(agent, api_key=KEY) as server:
        results, spans = traced_run(phoenix, monkeypatch, [
            "--suite", "executable", "--agent-model", "m", "--task-ids", TASKS, "--trials", "2", "--executor", "ray",
            "--ray-workers", "2"], tmp_path, server)
    assert len(results) == 4
    check(results, spans, {"agent"}, "executable")
    no_key(phoenix, spans)
