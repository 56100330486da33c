"""An OTLP/HTTP receiver for the tests, on 127.0.0.1: it decodes what llmproxy exports with the OpenTelemetry
protobuf definitions (opentelemetry-proto, the OTLP specification's own messages), as a collector would, and
can be told to fail (500) or to be slow — the faults a collector has."""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def value(given: AnyValue) -> Any:
    kind = given.WhichOneof("value")
    if kind == "array_value":
        return tuple(value(item) for item in given.array_value.values)
    return getattr(given, kind) if kind else None


@dataclass
class Span:
    name: str
    kind: int
    trace_id: str
    parent_span_id: str
    start_ns: int
    end_ns: int
    status: int
    attributes: dict[str, Any]
    resource: dict[str, Any]


@dataclass
class Received:
    spans: list[Span] = field(default_factory=list)
    metrics: dict[str, list[Any]] = field(default_factory=dict)  # name → its data points
    posts: int = 0
    status: int = 200  # what it answers
    delay: float = 0.0  # seconds before it answers
    lock: threading.RLock = field(default_factory=threading.RLock)

    def wait(self, predicate: Any, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if predicate(self):
                    return
            time.sleep(0.05)
        raise AssertionError(
            f"the receiver never got what was expected: {len(self.spans)} spans, {self.metrics.keys()}"
        )

    def metric_sum(self, name: str, **wanted: Any) -> float:
        """The latest cumulative sum of metric `name` over the points whose attributes include `wanted`."""
        latest: dict[tuple[Any, ...], float] = {}
        for point in self.metrics.get(name, []):
            attributes = {item.key: value(item.value) for item in point.attributes}
            if wanted.items() <= attributes.items():
                key = tuple(sorted(attributes.items()))
                latest[key] = point.sum if hasattr(point, "bucket_counts") else point.as_double or point.as_int
        return sum(latest.values())


def _handler(received: Received) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            if received.delay:
                time.sleep(received.delay)
            with received.lock:
                received.posts += 1
                status = received.status
                if status == 200 and self.path == "/v1/traces":
                    _spans(received, body)
                elif status == 200 and self.path == "/v1/metrics":
                    _metrics(received, body)
            self.send_response(status)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def _spans(received: Received, body: bytes) -> None:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    for resource_spans in request.resource_spans:
        resource = {item.key: value(item.value) for item in resource_spans.resource.attributes}
        for scope in resource_spans.scope_spans:
            for span in scope.spans:
                received.spans.append(
                    Span(
                        span.name,
                        span.kind,
                        span.trace_id.hex(),
                        span.parent_span_id.hex(),
                        span.start_time_unix_nano,
                        span.end_time_unix_nano,
                        span.status.code,
                        {item.key: value(item.value) for item in span.attributes},
                        resource,
                    )
                )


def _metrics(received: Received, body: bytes) -> None:
    request = ExportMetricsServiceRequest()
    request.ParseFromString(body)
    for resource_metrics in request.resource_metrics:
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                kind = metric.WhichOneof("data")
                points = getattr(metric, kind).data_points
                received.metrics.setdefault(metric.name, []).extend(points)


@contextmanager
def receiver() -> Iterator[tuple[str, Received]]:
    """A receiver on a free port: its base URL (as `--otlp` takes it) and what it received."""
    received = Received()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(received))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
