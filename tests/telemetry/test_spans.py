"""Traces of every episode, exported by OpenTelemetry's SDK over OTLP/HTTP to a receiver on loopback: one trace
per episode with the run's attributes, a span per model request and tool call (injected faults marked), the verdict
as an evaluation event equal to results.jsonl's, metrics beside them; no key anywhere; nothing at all when off."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from occubench import telemetry
from occubench.cli import run as evaluate
from occubench.core.task import Task
from occubench.core.traced import ToolSpans
from occubench.store import read_results
from occubench.testing import MockLLMServer
from tests.core.test_environment import Counter
from tests.core.test_tools import nested
from tests.telemetry.collector import Collector, collector

KEY = "sk-telemetry-secret-0123456789"
TASKS = "insurance_claims/pay_water_claim,insurance_claims/review_open_thefts"


def agent(request: dict, index: int) -> str | dict:
    """Reads a claim, then answers; as the judge, labels the work."""
    if request.get("tools"):
        if not any(m["role"] == "tool" for m in request["messages"]):
            return {"content": None, "tool_calls": [{"name": "get_claim", "arguments": {"claim_id": "CLM-1004"}}]}
        return f"I checked the claim (my key is {KEY})."
    return '<label>{"feedback": "nothing was paid", "label": "incomplete"}</label>'


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> Iterator[Collector]:
    with collector() as found:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", found.endpoint)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "occubench-test")
        monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "600000")  # exported when the run flushes, not before
        yield found
        monkeypatch.undo()
        telemetry.configure(False)  # the exporters to the receiver shut down before it does


def test_one_trace_per_episode_with_model_and_tool_spans_and_the_verdict(traced: Collector, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    with MockLLMServer(agent, api_key=KEY) as server:
        code = evaluate.main(["--suite", "executable", "--output-dir", str(tmp_path), "--run-name", "r",
                              "--agent-model", "m", "--verifier-model", "judge", "--base-url", server.base_url,
                              "--api-key", KEY, "--task-ids", TASKS, "--env-mode", "E1", "--fault-count", "1",
                              "--fault-duration", "1"])
    assert code in (0, 1)
    results = {(r["task_id"], r["trial"]): r for r in read_results(tmp_path / "r" / "results.jsonl")}
    roots = traced.roots()
    assert len(roots) == len(results) == 2 and len({root.trace for root in roots}) == 2
    for root in roots:
        result = results[(root.attributes["occubench.task"], root.attributes["occubench.trial"])]
        assert root.resource["service.name"] == "occubench-test"
        assert root.attributes["occubench.run"] == "r" and root.attributes["occubench.suite"] == "executable"
        assert root.attributes["occubench.fault_level"] == "E1"
        assert root.attributes["occubench.config_hash"] == result["config_hash"]
        [verdict] = [attributes for name, attributes in root.events if name == "gen_ai.evaluation.result"]
        assert verdict["gen_ai.evaluation.score.value"] == float(result["is_correct"])
        assert verdict["gen_ai.evaluation.score.label"] == ("pass" if result["is_correct"] else "fail")
        spans = traced.in_trace(root.trace)
        chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
        assert {s.attributes["occubench.role"] for s in chats} == {"agent", "judge"}
        for chat in chats:
            assert chat.parent == root.id and chat.kind == 3  # SPAN_KIND_CLIENT
            assert chat.attributes["gen_ai.usage.input_tokens"] > 0
            assert chat.attributes["gen_ai.response.finish_reasons"]
            assert chat.attributes["gen_ai.request.model"] in ("m", "judge")
            assert chat.attributes["server.address"] == "127.0.0.1"
        tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
        assert [s.attributes["gen_ai.tool.name"] for s in tools] == \
            [call["name"] for step in result["steps"] for call in step["tool_calls"]]
        assert sum(s.attributes["occubench.fault.injected"] for s in tools) == len(result["fault_events"])
    # Token usage and durations per role and model, as the GenAI metrics.
    roles = {point["occubench.role"] for point in traced.metrics["gen_ai.client.token.usage"]}
    assert roles == {"agent", "judge"} and traced.metrics["gen_ai.client.operation.duration"]
    # The agent's reply quoted the key, and content capture was on: masked in every byte exported.
    assert any(b"gen_ai.output.messages" in body for body in traced.raw)
    assert not any(KEY.encode() in body for body in traced.raw)


def test_a_failed_episode_is_an_error_span_and_no_evaluation(traced: Collector, tmp_path: Path) -> None:
    with MockLLMServer(agent, error_rate=1.0) as server:
        evaluate.main(["--suite", "executable", "--output-dir", str(tmp_path), "--run-name", "r", "--agent-model",
                       "m", "--base-url", server.base_url, "--task-ids", "insurance_claims/pay_water_claim",
                       "--skip-preflight", "--retry-budget", "0.01"])
    [result] = read_results(tmp_path / "r" / "results.jsonl")
    [root] = traced.roots()
    assert result["status"] == "error" and root.status == 2  # STATUS_CODE_ERROR
    assert not [name for name, _ in root.events if name == "gen_ai.evaluation.result"]


def test_off_by_default_nothing_of_opentelemetry_is_imported(tmp_path: Path) -> None:
    code = ("import sys; from occubench.cli import run; "
            f"code = run.main(['--suite', 'executable', '--agent', 'reference', '--output-dir', {str(tmp_path)!r}, "
            "'--task-ids', 'insurance_claims/pay_water_claim']); "
            "assert code == 0, code; "
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    environment = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    done = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_hostile_names_and_arguments_neither_fail_a_call_nor_lose_a_span(traced: Collector,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Content capture on: the agent's arguments and a world's answers are recorded, whatever they hold.
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    telemetry.configure(True)
    env = ToolSpans(Counter())
    task = Task(task_id="t\ud800" * 1000, instruction="", scenario="s", category="c", domain="d", difficulty=1,
                env_name="w\udfff")
    hostile = [("bump", {}), ("bump\ud800" * 10_000, {}), ("bump", {"deep": nested(100_000)}),
               ("bump", {"nan": float("nan"), "huge": 10 ** 5000, "text": "\ud800" * 1_000_000})]
    with telemetry.episode(task, 0, "r\ud800"):
        observations = [env.call(name, arguments) for name, arguments in hostile]
    telemetry.flush()
    assert observations[0] == {"value": 1} and all("error" in o for o in observations[1:])
    [root] = traced.roots()
    tools = [span for span in traced.spans if span.parent == root.id]
    assert len(tools) == len(hostile) and root.name.startswith("episode t?t?") and len(root.name) < 300
    assert all(len(span.attributes["gen_ai.tool.name"]) <= 200 for span in tools)
