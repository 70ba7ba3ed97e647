"""OpenTelemetry traces and metrics of every episode, made by OpenTelemetry's own SDK (the ``otel`` extra).

Off by default, and then free: nothing of OpenTelemetry is imported, and each hook below is one shared object that
does nothing. On with ``--otel``, or when the standard variables name an exporter's endpoint
(``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``); ``OTEL_SDK_DISABLED=true`` or
``OTEL_TRACES_EXPORTER=none`` keep it off. The SDK reads every other ``OTEL_*`` setting itself (service name,
headers, resource attributes). What each span and attribute means: ``docs/guides/telemetry.md``.

Each episode is one trace, whoever runs it (a local run, a Ray worker, ``serve``): the model calls, tool calls and
sandbox requests made while it runs are its spans; a call made outside an episode (a preflight) is not traced.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from occubench.errors import ConfigError

if TYPE_CHECKING:
    from occubench.telemetry.sdk import Telemetry

__all__ = ["active", "carried", "chat", "configure", "episode", "flush", "incoming", "span", "tool", "wanted"]

#: The extra that brings the SDK, as an error names it.
EXTRA = "pip install 'occubench[otel]'"

_telemetry: Telemetry | None = None
#: The W3C trace context (``traceparent``, ``tracestate``) of the request that started what runs in this context:
#: an outside agent's episode joins the agent's trace (:func:`incoming`).
_incoming: ContextVar[Mapping[str, str] | None] = ContextVar("occubench_incoming_trace", default=None)


class _Off:
    """Every hook's answer while telemetry is off: a context manager that records nothing."""

    def __enter__(self) -> _Off:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def done(self, *args: Any, **kwargs: Any) -> None:
        """What the hook was given to record: dropped."""


OFF = _Off()


def wanted(flag: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a run traces: ``--otel`` or an OTLP endpoint in the environment, unless the SDK is disabled there."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true" or \
            environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    return flag or bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def configure(flag: bool, secrets: Iterable[str | None] = ()) -> Telemetry | None:
    """Telemetry for this process's episodes as :func:`wanted` says (the same exporter as the last call's is kept);
    ``secrets`` are masked in anything recorded. Without the SDK: a :class:`ConfigError` naming the extra."""
    global _telemetry
    if not wanted(flag):
        if _telemetry is not None:  # what it recorded is exported, and no exporter is left to run at exit
            _telemetry.shutdown()
        _telemetry = None
        return None
    try:
        from occubench.telemetry.sdk import Telemetry
    except ImportError as exc:
        raise ConfigError(f"--otel (or OTEL_EXPORTER_OTLP_ENDPOINT): OpenTelemetry's SDK is not installed ({exc}); "
                          f"install it with {EXTRA}") from None
    _telemetry = Telemetry.for_environment(secrets, _telemetry)
    return _telemetry


def active() -> Telemetry | None:
    return _telemetry


def flush() -> None:
    """Export what is recorded so far (a Ray worker's episodes, before the actor is killed)."""
    if _telemetry is not None:
        _telemetry.flush()


def carried(carrier: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The W3C trace context (``traceparent``, ``tracestate``) in ``carrier``: HTTP headers or an MCP request's
    ``_meta``. None without one, or while telemetry is off (nothing is kept then)."""
    if _telemetry is None or not carrier:
        return None
    found = {name: value for name in ("traceparent", "tracestate") if isinstance(value := carrier.get(name), str)}
    return found if "traceparent" in found else None


def incoming(carrier: Mapping[str, Any] | None) -> None:
    """The trace context an outside agent sent (:func:`carried`), for what this context does next: an episode it
    starts joins the agent's trace, a tool call it makes is linked to the agent's span. Without one, neither."""
    if _telemetry is not None:
        _incoming.set(carried(carrier))



def episode(task: Any, trial: int, run: str) -> Any:
    """The span of one episode: a trace of its own, or a part of the trace of the request that started it
    (:func:`incoming`); ``done(result)`` records the verdict."""
    return OFF if _telemetry is None else _telemetry.episode(task, trial, run, _incoming.get())


def chat(role: str, model: str, messages: list[Any], count: int = 1) -> Any:
    """The span of one model request of ``role`` inside an episode; ``done(completion)`` records its answer."""
    return OFF if _telemetry is None else _telemetry.chat(role, model, messages, count)


def tool(name: str, arguments: Mapping[str, Any]) -> Any:
    """The span of one tool call, linked to the outside agent's span that made it (:func:`incoming`);
    ``done(observation, faults)`` records its outcome."""
    return OFF if _telemetry is None else _telemetry.tool(name, arguments, _incoming.get())


def span(name: str, attributes: Mapping[str, Any]) -> Any:
    """A plain span inside an episode (a sandbox request)."""
    return OFF if _telemetry is None else _telemetry.span(name, attributes)
