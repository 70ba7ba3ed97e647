"""An OTLP/HTTP receiver on loopback, as a collector is one: what a run exports, decoded by OpenTelemetry's own
protobuf messages (``opentelemetry-proto``, which the exporter brings), the raw bytes kept as received."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass
class Span:
    trace: str
    id: str
    parent: str
    name: str
    kind: int
    status: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    resource: dict[str, Any]
    #: (trace id, span id) of each span it links to.
    links: list[tuple[str, str]]


@dataclass
class Collector:
    endpoint: str = ""
    raw: list[bytes] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    #: Metric name → the attribute sets of its data points.
    metrics: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def roots(self) -> list[Span]:
        return [span for span in self.spans if not span.parent]

    def in_trace(self, trace: str) -> list[Span]:
        return [span for span in self.spans if span.trace == trace]


def value(any_value: AnyValue) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(item) for item in any_value.array_value.values]
    if kind == "kvlist_value":
        return {item.key: value(item.value) for item in any_value.kvlist_value.values}
    return getattr(any_value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: value(pair.value) for pair in pairs}


@contextmanager
def collector() -> Iterator[Collector]:
    found = Collector()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with lock:
                found.raw.append(body)
                if self.path == "/v1/traces":
                    _spans(body, found)
                elif self.path == "/v1/metrics":
                    _metrics(body, found)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    found.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        server.shutdown()
        server.server_close()


def _spans(body: bytes, found: Collector) -> None:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope in resource_spans.scope_spans:
            found.spans += [Span(span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex(), span.name,
                                 span.kind, span.status.code, _attributes(span.attributes),
                                 [(event.name, _attributes(event.attributes)) for event in span.events], resource,
                                 [(link.trace_id.hex(), link.span_id.hex()) for link in span.links])
                            for span in scope.spans]


def _metrics(body: bytes, found: Collector) -> None:
    request = ExportMetricsServiceRequest()
    request.ParseFromString(body)
    for resource_metrics in request.resource_metrics:
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                points = metric.histogram.data_points if metric.HasField("histogram") else []
                found.metrics.setdefault(metric.name, []).extend(_attributes(p.attributes) for p in points)
