"""The spans, events and metrics of :mod:`occubench.telemetry`, by OpenTelemetry's SDK, named as OpenTelemetry's
GenAI semantic conventions name them (``gen_ai.*``); what is ours alone is under ``occubench.*``."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from occubench import __version__
from occubench.util.redact import Redactor, environment_secrets

#: The GenAI conventions' switch for message content in spans.
CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
#: The longest text an attribute or event carries (a model's reply can be megabytes), and the longest name.
MAX_TEXT, MAX_NAME = 8_000, 200
#: A run's roles as the spans name them.
ROLES = {"agent": "agent", "world": "world", "verifier": "judge", "npc": "colleague", "reflection": "reflection"}

#: The episode whose spans are being made, in this context (model requests outside an episode are not traced).
_episode: ContextVar[Span | None] = ContextVar("occubench_episode_span", default=None)


class Telemetry:
    """A tracer and a meter for the episodes of this process, exported where the environment says (OTLP/HTTP by
    default)."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self.secrets = [secret for secret in secrets if secret]
        self.redactor = Redactor([*self.secrets, *environment_secrets()])
        # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES are the SDK's to read; ours is the name without them.
        named = "OTEL_SERVICE_NAME" in os.environ or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
        resource = Resource.create({} if named else {"service.name": "occubench"})
        self.provider = TracerProvider(resource=resource)
        # A queue for a burst of thousands of episodes' spans (the SDK's 2,048 drops the rest), unless set.
        queue = None if "OTEL_BSP_MAX_QUEUE_SIZE" in os.environ else 1 << 16
        console = _exporter("OTEL_TRACES_EXPORTER") == "console"  # the SDK's spans as JSON on standard output
        self.provider.add_span_processor(BatchSpanProcessor(
            ConsoleSpanExporter() if console else OTLPSpanExporter(), max_queue_size=queue))
        self.tracer = self.provider.get_tracer("occubench", __version__)
        metric_exporter = {"none": None, "console": ConsoleMetricExporter}.get(_exporter("OTEL_METRICS_EXPORTER"),
                                                                               OTLPMetricExporter)
        metrics = PeriodicExportingMetricReader(metric_exporter()) if metric_exporter else None
        self.meters = MeterProvider(resource=resource, metric_readers=[metrics] if metrics else [])
        meter = self.meters.get_meter("occubench", __version__)
        self.tokens = meter.create_histogram("gen_ai.client.token.usage", unit="{token}",
                                             description="Tokens used per model request, by role and model")
        self.duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s",
                                               description="Duration of each model request, by role and model")
        self.capture = os.environ.get(CAPTURE, "").strip().lower() == "true"
        self.key = _environment_key()

    @classmethod
    def for_environment(cls, secrets: Iterable[str | None], current: Telemetry | None) -> Telemetry:
        """``current`` when the environment still configures the same exporters (its secrets joined), else a new one
        (``current`` flushed and shut down: one exporter per endpoint)."""
        if current is not None and current.key == _environment_key():
            current.secrets += [secret for secret in secrets if secret]
            current.redactor = Redactor([*current.secrets, *environment_secrets()])
            return current
        if current is not None:
            current.shutdown()
        return cls(secrets)

    def flush(self) -> None:
        self.provider.force_flush()
        self.meters.force_flush()

    def shutdown(self) -> None:
        self.provider.shutdown()
        self.meters.shutdown()

    def text(self, value: object, limit: int = MAX_TEXT) -> str:
        """``value`` as an attribute carries text: secrets masked, cut to ``limit``, and valid UTF-8 whatever it
        holds (OTLP's encoder drops an attribute with a lone surrogate, logging a traceback)."""
        try:
            shown = value if isinstance(value, str) else json.dumps(value, default=str)
        except (ValueError, TypeError, RecursionError) as exc:  # nested past the encoder's depth, say
            shown = f"(not shown: {type(exc).__name__})"
        return self.redactor.text(shown)[:limit].encode("utf-8", "replace").decode("utf-8")

    @contextmanager
    def episode(self, task: Any, trial: int, run: str, parent: Mapping[str, str] | None) -> Iterator[_Episode]:
        context = TraceContextTextMapPropagator().extract(parent) if parent else otel_context.Context()
        name = self.text(str(task.task_id), MAX_NAME)
        with self.tracer.start_as_current_span(
                f"episode {name}", context=context, record_exception=False, set_status_on_exception=False,
                attributes={"gen_ai.operation.name": "invoke_agent", "occubench.run": self.text(run, MAX_NAME),
                            "occubench.task": name, "occubench.trial": trial,
                            "occubench.world": self.text(str(task.env_name or task.scenario), MAX_NAME)}) as span:
            token = _episode.set(span)
            try:
                yield _Episode(self, span)
            finally:
                _episode.reset(token)

    @contextmanager
    def chat(self, role: str, model: str, messages: list[Any], count: int) -> Iterator[Any]:
        if _episode.get() is None:
            yield _NOTHING
            return
        chat = _Chat(self, role, model, messages, count)
        try:
            yield chat
        except BaseException as exc:
            chat.end(exc)
            raise
        chat.end(None)

    @contextmanager
    def tool(self, name: str, arguments: Mapping[str, Any], caller: Mapping[str, str] | None = None,
             ) -> Iterator[_Tool]:
        """A tool call's span; linked to ``caller``'s span (an outside agent's trace context) when that is of
        another trace."""
        name = self.text(name, MAX_NAME)  # the agent's text
        attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
        if self.capture:
            attributes["gen_ai.tool.call.arguments"] = self.text(arguments)
        links = []
        if caller:
            agent = trace.get_current_span(TraceContextTextMapPropagator().extract(caller)).get_span_context()
            if agent.is_valid and agent.trace_id != trace.get_current_span().get_span_context().trace_id:
                links.append(Link(agent))
        with self.tracer.start_as_current_span(f"execute_tool {name}", attributes=attributes, links=links,
                                               record_exception=False, set_status_on_exception=False) as span:
            try:
                yield _Tool(self, span)
            except BaseException as exc:
                _failed(span, exc, self)
                raise

    @contextmanager
    def span(self, name: str, attributes: Mapping[str, Any]) -> Iterator[None]:
        if _episode.get() is None:
            yield None
            return
        shown = {key: self.text(value, MAX_NAME) if isinstance(value, str) else value
                 for key, value in attributes.items()}
        with self.tracer.start_as_current_span(name, attributes=shown, record_exception=False,
                                               set_status_on_exception=False) as span:
            try:
                yield None
            except BaseException as exc:
                _failed(span, exc, self)
                raise


class _Episode:
    def __init__(self, telemetry: Telemetry, span: Span) -> None:
        self.telemetry, self.span = telemetry, span

    def done(self, result: Any) -> None:
        """The episode's result: its run's settings as attributes, each judge vote and the verdict as events."""
        text, span = self.telemetry.text, self.span
        span.set_attributes({"occubench.suite": result.suite or "", "occubench.fault_level": result.env_mode,
                             "occubench.config_hash": result.config_hash or "", "occubench.status": result.status,
                             "occubench.steps": result.step_count, "occubench.stop_reason": result.stop_reason,
                             **({"gen_ai.agent.name": text(result.agent_model, MAX_NAME)} if result.agent_model
                                else {})})
        for number, vote in enumerate(result.votes, start=1):
            span.add_event("occubench.judge.vote", {
                "occubench.vote.number": number, "occubench.vote.attempts": vote.attempts,
                "occubench.vote.label": "unparsable" if vote.is_correct is None else
                "pass" if vote.is_correct else "fail", "occubench.vote.feedback": text(vote.feedback)})
        if result.status == "error":
            span.set_status(Status(StatusCode.ERROR, text(result.error.message if result.error else "error")))
            span.set_attribute("error.type", result.error.kind if result.error else "error")
            return
        span.add_event("gen_ai.evaluation.result", {
            "gen_ai.evaluation.name": "occubench.verdict", "gen_ai.evaluation.score.value": float(result.is_correct),
            "gen_ai.evaluation.score.label": "pass" if result.is_correct else "fail",
            "gen_ai.evaluation.explanation": text(result.feedback)})


class _Chat:
    """A model request's span, made when the request ends (with its start time): a request is a leaf of the trace,
    so nothing needs it current meanwhile, and the SDK sets its attributes once."""

    def __init__(self, telemetry: Telemetry, role: str, model: str, messages: list[Any], count: int) -> None:
        model = telemetry.text(model, MAX_NAME)
        self.telemetry, self.model, self.began, self.started = telemetry, model, time.time_ns(), time.monotonic()
        self.metric_attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                                  "occubench.role": ROLES.get(role, role)}
        self.attributes: dict[str, Any] = dict(self.metric_attributes)
        if count > 1:
            self.attributes["gen_ai.request.choice.count"] = count
        if telemetry.capture:
            self.attributes["gen_ai.input.messages"] = telemetry.text(messages)

    def done(self, completion: Any, server: str | None = None) -> None:
        """A request's answer from ``server`` (a URL, of which only the host and port are kept): the model that gave
        it, token usage and why each choice ended."""
        usage, model, attributes = completion.usage, completion.model, self.attributes
        attributes.update({
            "gen_ai.usage.input_tokens": usage.prompt_tokens, "gen_ai.usage.output_tokens": usage.completion_tokens,
            "gen_ai.response.finish_reasons": [self.telemetry.text(reply.finish_reason or "", MAX_NAME)
                                               for reply in completion.replies],
            **_server(server)})
        if model:
            attributes["gen_ai.response.model"] = self.metric_attributes["gen_ai.response.model"] = \
                self.telemetry.text(model, MAX_NAME)
        if self.telemetry.capture:
            attributes["gen_ai.output.messages"] = self.telemetry.text(
                [{"content": reply.content, "tool_calls": [call.name for call in reply.tool_calls],
                  "finish_reason": reply.finish_reason} for reply in completion.replies])
        for kind, count in (("input", usage.prompt_tokens), ("output", usage.completion_tokens)):
            self.telemetry.tokens.record(count, {**self.metric_attributes, "gen_ai.token.type": kind})

    def end(self, error: BaseException | None) -> None:
        telemetry = self.telemetry
        span = telemetry.tracer.start_span(f"chat {self.model}", kind=SpanKind.CLIENT, attributes=self.attributes,
                                           start_time=self.began, record_exception=False,
                                           set_status_on_exception=False)
        if error is not None:
            _failed(span, error, telemetry)
            self.metric_attributes["error.type"] = type(error).__name__
        span.end()
        telemetry.duration.record(time.monotonic() - self.started, self.metric_attributes)


@lru_cache(maxsize=64)
def _server(url: str | None) -> dict[str, Any]:
    """``server.address`` and ``server.port`` of an endpoint's URL (shown without credentials)."""
    parts = urlsplit(url or "")
    return {} if not parts.hostname else {"server.address": parts.hostname,
                                          **({"server.port": parts.port} if parts.port else {})}


class _Tool:
    def __init__(self, telemetry: Telemetry, span: Span) -> None:
        self.telemetry, self.span = telemetry, span

    def done(self, observation: Mapping[str, Any], faults: list[Any]) -> None:
        """A call's observation (an ``error`` key: its kind is the outcome) and the faults injected into it."""
        error = observation.get("error")
        outcome = str(error) if isinstance(error, str) else "ok"
        attributes: dict[str, Any] = {"occubench.tool.outcome": outcome, "occubench.fault.injected": bool(faults)}
        if faults:
            attributes.update({"occubench.fault.kind": faults[0].kind, "occubench.fault.name": faults[0].fault})
        if self.telemetry.capture:
            attributes["gen_ai.tool.call.result"] = self.telemetry.text(observation)
        if outcome != "ok":
            attributes["error.type"] = outcome
        self.span.set_attributes(attributes)


class _Nothing:
    def done(self, *args: Any, **kwargs: Any) -> None:
        return None


_NOTHING = _Nothing()


def _failed(span: Span, exc: BaseException, telemetry: Telemetry) -> None:
    """The span ended by ``exc``: its type, and its message with secrets masked (never its traceback's locals)."""
    span.set_status(Status(StatusCode.ERROR, telemetry.text(str(exc))))
    span.set_attribute("error.type", type(exc).__name__)


def _exporter(variable: str) -> str:
    """The exporter an ``OTEL_*_EXPORTER`` variable names: otlp (the default), console or none."""
    return os.environ.get(variable, "otlp").strip().lower()


def _environment_key() -> tuple[str, ...]:
    """What decides where spans and metrics go: the exporters' settings in the environment."""
    return tuple(f"{name}={value}" for name, value in sorted(os.environ.items()) if name.startswith("OTEL_"))

