"""The OTLP messages llmproxy writes itself, read back with opentelemetry-proto (the specification's own
messages, as a collector reads them): a span with every kind of attribute value, in the client's trace or in
one of its own, and the metrics — counters, histograms and gauges — as the registry keeps them."""

from datetime import UTC, datetime

from google.protobuf.internal.encoder import _VarintBytes
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from llmproxy.meter import Answered, Call
from llmproxy.model import Provider, Usage
from llmproxy.telemetry.conventions import Facts, attributes
from llmproxy.telemetry.metrics import BUDGET_SPENT, CALLS, DURATION, Registry
from llmproxy.telemetry.protobuf import varint
from llmproxy.telemetry.wire import Encoder, parent
from tests.telemetry.receiver import value

AT = datetime(2026, 11, 29, 6, 0, 0, 250_000, tzinfo=UTC)
TRACE, SPAN = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
ENCODER = Encoder({"service.name": "llmproxy", "deployment.environment": "ci"}, "llmproxy", "1.2.3")


def call(status: int = 200) -> Call:
    usage = Usage(input_tokens=120, output_tokens=14, cache_read_tokens=100)
    return Call(
        method="POST",
        host="api.anthropic.com",
        path="/v1/messages",
        answered=Answered.HIT,
        status=status,
        provider=Provider.ANTHROPIC,
        model="claude-haiku-4-5",
        usage=usage,
        latency_ms=1500.0,
        at=AT,
    )


def traces(body: bytes) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return request


def test_a_span_reads_back_with_every_kind_of_attribute() -> None:
    facts = Facts(operation="chat", provider="anthropic", traceparent=f"00-{TRACE}-{SPAN}-01", tracestate="k=v")
    given = attributes(call(), facts, {"llmproxy.run.id": "r1"})
    given["llmproxy.test.offset"] = -3  # a negative int64: ten bytes on the wire
    given["gen_ai.request.temperature"] = 0.25
    given["gen_ai.request.stop_sequences"] = ("STOP", "END")
    request = traces(ENCODER.traces([ENCODER.span(call(), facts, ENCODER.attributes(given))] * 2))
    (resource_spans,) = request.resource_spans
    resource = {item.key: value(item.value) for item in resource_spans.resource.attributes}
    assert resource == {"service.name": "llmproxy", "deployment.environment": "ci"}
    (scope,) = resource_spans.scope_spans
    assert (scope.scope.name, scope.scope.version) == ("llmproxy", "1.2.3")
    assert len(scope.spans) == 2
    span = scope.spans[0]
    assert span.name == "chat claude-haiku-4-5"
    assert span.kind == 3  # CLIENT
    assert (span.trace_id.hex(), span.parent_span_id.hex(), span.trace_state) == (TRACE, SPAN, "k=v")
    assert len(span.span_id) == 8
    assert span.end_time_unix_nano == int(AT.replace(microsecond=0).timestamp()) * 10**9 + 250_000_000
    assert span.end_time_unix_nano - span.start_time_unix_nano == 1_500_000_000
    assert span.status.code == 0
    found = {item.key: value(item.value) for item in span.attributes}
    assert found == dict(given)


def test_a_failed_call_is_an_error_in_a_trace_of_its_own() -> None:
    facts = Facts(operation="chat", traceparent="00-" + "0" * 32 + f"-{SPAN}-01")  # no trace: not valid
    (span,) = traces(ENCODER.traces([ENCODER.span(call(529), facts, b"")])).resource_spans[0].scope_spans[0].spans
    assert (span.status.code, span.status.message) == (2, "529")
    assert span.parent_span_id == b""
    assert len(span.trace_id) == 16


def test_only_a_valid_traceparent_is_continued() -> None:
    assert parent(f"00-{TRACE}-{SPAN}-01") == (bytes.fromhex(TRACE), bytes.fromhex(SPAN))
    for wrong in (None, "", f"ff-{TRACE}-{SPAN}-01", f"00-{TRACE}-{'0' * 16}-01", f"00-{TRACE.upper()}-{SPAN}-01"):
        assert parent(wrong) is None


def test_the_metrics_read_back_as_the_registry_keeps_them() -> None:
    registry = Registry()
    labels = (("gen_ai.request.model", "claude-haiku-4-5"),)
    for seconds in (0.005, 0.5, 0.5, 100.0):
        registry.add(DURATION, seconds, labels)
    registry.add(CALLS, 1, labels)
    registry.add(CALLS, 1, labels)
    gauges = [(BUDGET_SPENT, 0.125, ())]
    request = ExportMetricsServiceRequest()
    request.ParseFromString(ENCODER.metrics(registry.series(), gauges, 10, 20))
    metrics = {metric.name: metric for metric in request.resource_metrics[0].scope_metrics[0].metrics}
    duration = metrics["gen_ai.client.operation.duration"]
    assert duration.unit == "s"
    (point,) = duration.histogram.data_points
    assert duration.histogram.aggregation_temporality == 2  # cumulative
    assert (point.start_time_unix_nano, point.time_unix_nano, point.count, point.sum) == (10, 20, 4, 101.005)
    assert list(point.explicit_bounds) == list(DURATION.buckets)
    assert len(point.bucket_counts) == len(DURATION.buckets) + 1
    assert (point.bucket_counts[0], point.bucket_counts[6], point.bucket_counts[-1]) == (
        1,
        2,
        1,
    )  # ≤0.01, ≤0.64, >81.92
    assert {item.key: value(item.value) for item in point.attributes} == dict(labels)
    calls = metrics["llmproxy.calls"].sum
    assert (calls.is_monotonic, calls.aggregation_temporality, calls.data_points[0].as_double) == (True, 2, 2)
    assert metrics["llmproxy.budget.spent"].gauge.data_points[0].as_double == 0.125


def test_varints_are_written_as_protobuf_writes_them() -> None:
    for number in (0, 1, 127, 128, 300, 16383, 16384, 2**21, 2**32, 2**63 - 1, -1, -300):
        assert varint(number) == _VarintBytes(number % 2**64)  # a negative int64 as its two's complement
