"""The Phoenix harness (tests/telemetry/phoenix.py) proved on a trace of our own: sent by our OpenTelemetry SDK
(a batch span processor and the OTLP/HTTP exporter, as occubench's tracing sends) to Phoenix's own server, and
read back through Phoenix's own client as it was sent: its ids and parent links, every attribute of every type, its
events' attributes, its status; spans carrying the GenAI conventions' attributes keep them as sent, beside what
Phoenix derives from them; a resource's ``openinference.project.name`` chooses the project, ``default`` otherwise."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import extra_reason
from tests.telemetry.phoenix import Phoenix

pytest.importorskip("opentelemetry.sdk", reason=extra_reason("otel"))
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

pytestmark = pytest.mark.slow  # Phoenix takes ~16 s to start, its client ~10 s to import

ROOT_ATTRIBUTES: dict[str, Any] = {
    "occubench.suite": "executable", "occubench.trial": 2, "occubench.cost_usd": 0.125, "occubench.ok": True,
    "occubench.tags": ["a", "b"], "occubench.seeds": [3, 5], "occubench.weights": [0.5, 1.5],
    "occubench.flags": [True, False],
}
CHILD_ATTRIBUTES: dict[str, Any] = {"tool.name": "read_file", "tool.fault": False}
EVENT_ATTRIBUTES: dict[str, Any] = {"score": 0.75, "label": "pass", "votes": 3, "unanimous": True,
                                    "explanation": "the file was written"}


def send(phoenix: Phoenix, resource: dict[str, Any], spans: Callable[[Tracer], None]) -> None:
    """``spans`` made by a tracer of our SDK's, exported in batches to Phoenix over OTLP/HTTP, flushed."""
    provider = TracerProvider(resource=Resource.create(resource))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=phoenix.traces_endpoint)))
    try:
        spans(provider.get_tracer("occubench.tests"))
        assert provider.force_flush(timeout_millis=60_000)
    finally:
        provider.shutdown()


def project() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


def test_a_trace_is_read_back_as_sent(phoenix: Phoenix) -> None:
    name = project()
    sent: dict[str, Any] = {}

    def spans(tracer: Tracer) -> None:
        with tracer.start_as_current_span("episode", kind=SpanKind.INTERNAL, attributes=ROOT_ATTRIBUTES) as root:
            with tracer.start_as_current_span("tool", kind=SpanKind.CLIENT, attributes=CHILD_ATTRIBUTES) as child:
                child.add_event("verdict", EVENT_ATTRIBUTES)
                child.add_event("bare")
                child.set_status(Status(StatusCode.ERROR, "the tool failed"))
            root.set_status(Status(StatusCode.OK))
        sent.update(trace=f"{root.get_span_context().trace_id:032x}", root=f"{root.get_span_context().span_id:016x}",
                    child=f"{child.get_span_context().span_id:016x}")

    send(phoenix, {"service.name": "occubench", "openinference.project.name": name}, spans)
    stored = {span["name"]: span for span in phoenix.spans(name, count=2)}

    assert sorted(stored) == ["episode", "tool"]
    root, child = stored["episode"], stored["tool"]
    assert {root["trace_id"], child["trace_id"]} == {sent["trace"]}
    assert (root["span_id"], root["parent_id"]) == (sent["root"], None)
    assert (child["span_id"], child["parent_id"]) == (sent["child"], sent["root"])
    # Attributes come back flat (dotted names), each of its type; without GenAI attributes Phoenix adds none.
    assert root["attributes"] == ROOT_ATTRIBUTES
    assert child["attributes"] == CHILD_ATTRIBUTES
    assert [(e["name"], e["attributes"]) for e in child["events"]] == [("verdict", EVENT_ATTRIBUTES), ("bare", {})]
    assert root["events"] == []
    assert (root["status"], child["status"], child["status_message"]) == ("OK", "ERROR", "the tool failed")
    # Phoenix's kind is OpenInference's, not OpenTelemetry's SpanKind (which its client does not give).
    assert root["kind"] == child["kind"] == "UNKNOWN"
    assert any(p["name"] == name for p in phoenix.projects())


def test_genai_attributes_are_kept_beside_what_phoenix_derives(phoenix: Phoenix) -> None:
    name = project()
    chat: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "agent-model",
                            "gen_ai.response.model": "agent-model-1", "gen_ai.usage.input_tokens": 120,
                            "gen_ai.usage.output_tokens": 30, "gen_ai.response.finish_reasons": ["tool_calls"],
                            "occubench.role": "agent"}
    tool: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file",
                            "occubench.fault": "timeout"}
    evaluation: dict[str, Any] = {"gen_ai.evaluation.name": "verdict", "gen_ai.evaluation.score.value": 1.0,
                                  "gen_ai.evaluation.score.label": "pass",
                                  "gen_ai.evaluation.explanation": "all checkpoints met"}

    def spans(tracer: Tracer) -> None:
        with tracer.start_as_current_span("invoke_agent", kind=SpanKind.INTERNAL) as root:
            with tracer.start_as_current_span("chat agent-model", kind=SpanKind.CLIENT, attributes=chat):
                pass
            with tracer.start_as_current_span("execute_tool read_file", kind=SpanKind.INTERNAL, attributes=tool):
                pass
            root.add_event("gen_ai.evaluation.result", evaluation)

    send(phoenix, {"service.name": "occubench", "openinference.project.name": name}, spans)
    stored = {span["name"]: span for span in phoenix.spans(name, count=3)}

    assert stored["chat agent-model"]["attributes"].items() >= chat.items()
    assert stored["execute_tool read_file"]["attributes"].items() >= tool.items()
    # Phoenix maps the GenAI conventions onto OpenInference's: a chat is an LLM span, a tool call a TOOL span, and
    # derived attributes (llm.*, tool.*) are added beside the ones sent.
    assert stored["chat agent-model"]["kind"] == "LLM"
    assert stored["chat agent-model"]["attributes"]["llm.token_count.prompt"] == 120
    assert stored["execute_tool read_file"]["kind"] == "TOOL"
    assert [(e["name"], e["attributes"]) for e in stored["invoke_agent"]["events"]] == [
        ("gen_ai.evaluation.result", evaluation)]


def test_the_project_is_the_resources_or_default(phoenix: Phoenix) -> None:
    name = project()
    traces: dict[str, str] = {}

    def spans(key: str) -> Callable[[Tracer], None]:
        def make(tracer: Tracer) -> None:
            with tracer.start_as_current_span(key) as span:
                traces[key] = f"{span.get_span_context().trace_id:032x}"
        return make

    send(phoenix, {"service.name": "occubench"}, spans("unnamed"))
    send(phoenix, {"service.name": "occubench", "openinference.project.name": name}, spans("named"))

    [named] = phoenix.spans(name, count=1)
    [unnamed] = phoenix.spans("default", trace_ids=[traces["unnamed"]], count=1)
    assert (named["name"], named["trace_id"]) == ("named", traces["named"])
    assert (unnamed["name"], unnamed["trace_id"]) == ("unnamed", traces["unnamed"])
    assert phoenix.spans("default", trace_ids=[traces["named"]]) == []
    assert {"default", name} <= {p["name"] for p in phoenix.projects()}
