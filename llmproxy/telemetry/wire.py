"""The OTLP messages llmproxy sends, written straight from its own records (opentelemetry-proto's
`ExportTraceServiceRequest` and `ExportMetricsServiceRequest`, protobuf-encoded: what every OTLP/HTTP collector
takes): a call's span from its `Call`, `Facts` and attributes; the metrics from the registry's series.

A span's attributes mostly repeat from call to call (the model, the host, the run, most token counts), so each
attribute's encoded bytes are kept, up to `KEPT` of them: a call's span is then mostly joining kept bytes.
"""

import random
import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from llmproxy.meter import Call
from llmproxy.telemetry.conventions import AttributeValue, Facts, error_type, span_name
from llmproxy.telemetry.metrics import Instrument, Kind, Labels, Series
from llmproxy.telemetry.protobuf import (
    FIXED64,
    LENGTH,
    double,
    fixed64,
    length_delimited,
    packed_double,
    packed_fixed64,
    string,
    tag,
    unsigned,
    varint,
)

KEPT: Final = 8192  # encoded attributes kept; past that the store starts again (a run of ever-new values)
CLIENT: Final = 3  # SpanKind.SPAN_KIND_CLIENT
ERROR: Final = 2  # Status.STATUS_CODE_ERROR
CUMULATIVE: Final = 2  # AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
_TRACEPARENT: Final = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}")
_SPAN: Final = tag(2, LENGTH)  # a span, as ScopeSpans' field 2
_TRACE_ID: Final = tag(1, LENGTH) + varint(16)
_SPAN_ID: Final = tag(2, LENGTH) + varint(8)
_START: Final = 7 << 3 | FIXED64  # the tags of start_time_unix_nano and end_time_unix_nano, one byte each
_END: Final = 8 << 3 | FIXED64
_TIMES: Final = struct.Struct("<BQBQ")
_NO_TRACE: Final = "0" * 32
_NO_SPAN: Final = "0" * 16

type Untimed = tuple[bytes, bytes]  # a span's name and kind; its attributes and status


def any_value(value: AttributeValue) -> bytes:
    """An `AnyValue`: a string, bool, int64, double, or an array of them."""
    if isinstance(value, str):
        return string(1, value)
    if isinstance(value, bool):
        return unsigned(2, int(value))
    if isinstance(value, int):
        return unsigned(3, value)
    if isinstance(value, float):
        return double(4, value)
    return length_delimited(5, b"".join(length_delimited(1, any_value(item)) for item in value))


def key_value(key: str, value: AttributeValue) -> bytes:
    return string(1, key) + length_delimited(2, any_value(value))


def attributes(field: int, given: Iterable[tuple[str, AttributeValue]]) -> bytes:
    return b"".join(length_delimited(field, key_value(key, value)) for key, value in given)


def parent(traceparent: str | None) -> tuple[bytes, bytes] | None:
    """The trace and span ids of a W3C `traceparent`; None when there is none, or it is not valid."""
    if traceparent is None or (found := _TRACEPARENT.fullmatch(traceparent.strip())) is None:
        return None
    version, trace, span = found.groups()
    if version == "ff" or trace == _NO_TRACE or span == _NO_SPAN:
        return None
    return bytes.fromhex(trace), bytes.fromhex(span)


class Encoder:
    """The OTLP requests of one run: its resource (`service.name`…) and instrumentation scope on every one."""

    def __init__(self, resource: Mapping[str, str], scope: str, version: str) -> None:
        self._resource = length_delimited(1, attributes(1, resource.items()))
        self._scope = length_delimited(1, string(1, scope) + string(2, version))
        self._kept: dict[tuple[str, AttributeValue, type], bytes] = {}

    def span(self, call: Call, facts: Facts, attributes: bytes) -> bytes:
        """A `Span` (as ScopeSpans' field 2) with the `attributes` encoded by `attributes`: CLIENT, from when the
        call began to when its answer ended, in the client's trace when it sent a valid `traceparent`, `ERROR`
        when it failed."""
        return self.timed(call, facts, self.untimed(call, facts, attributes))

    def untimed(self, call: Call, facts: Facts, attributes: bytes) -> Untimed:
        """What `span` writes of a call whatever its trace and times, as the fields around the times go: its
        name and kind, then its attributes and status. A recording served again and again keeps it."""
        named = string(5, span_name(call, facts)) + unsigned(6, CLIENT)
        if (error := error_type(call)) is not None:
            return named, attributes + length_delimited(15, string(2, error) + unsigned(3, ERROR))
        return named, attributes

    def timed(self, call: Call, facts: Facts, untimed: Untimed) -> bytes:
        """The span of `call` from what `untimed` wrote of it: its ids, its parent and its times joined to it."""
        ids = random.getrandbits(192).to_bytes(24)  # as the OpenTelemetry SDK makes them: not a secret
        found = parent(facts.traceparent) if facts.traceparent is not None else None
        if found is None:
            parts = [_TRACE_ID, ids[:16], _SPAN_ID, ids[16:]]
        else:
            trace, parent_span = found
            parts = [_TRACE_ID, trace, _SPAN_ID, ids[16:]]
            if facts.tracestate:
                parts.append(string(3, facts.tracestate))
            parts.append(length_delimited(4, parent_span))
        end = int(call.at.timestamp() * 1_000_000) * 1000  # microseconds: a float keeps no more
        start = end - int((call.latency_ms or 0) * 1_000_000)
        named, tail = untimed
        parts += (named, _TIMES.pack(_START, start, _END, end), tail)
        span = b"".join(parts)
        return _SPAN + varint(len(span)) + span

    def attributes(self, given: Mapping[str, AttributeValue]) -> bytes:
        """A span's attributes `given`, encoded (each attribute's encoding kept, for the next span that has it)."""
        kept = self._kept
        parts = []
        for key, value in given.items():
            cached = (key, value, type(value))
            encoded = kept.get(cached)
            if encoded is None:
                if len(kept) >= KEPT:
                    kept.clear()
                encoded = kept[cached] = length_delimited(9, key_value(key, value))
            parts.append(encoded)
        return b"".join(parts)

    def traces(self, spans: Sequence[bytes]) -> bytes:
        """An `ExportTraceServiceRequest` of `spans` (each from `span`)."""
        scope_spans = length_delimited(2, self._scope + b"".join(spans))
        return length_delimited(1, self._resource + scope_spans)

    def metrics(
        self,
        series: Sequence[Series],
        gauges: Sequence[tuple[Instrument, float, Labels]],
        start_ns: int,
        now_ns: int,
    ) -> bytes:
        """An `ExportMetricsServiceRequest`: each instrument's series since `start_ns` (cumulative), and the
        gauges as they are now."""
        by_instrument: dict[Instrument, list[bytes]] = {}
        for instrument, labels, total, count, buckets in series:
            times = fixed64(2, start_ns) + fixed64(3, now_ns)
            if instrument.kind is Kind.HISTOGRAM:
                point = attributes(9, labels) + times + fixed64(4, count) + double(5, total)
                point += packed_fixed64(6, buckets) + packed_double(7, instrument.buckets)
            else:
                point = attributes(7, labels) + times + double(4, total)
            by_instrument.setdefault(instrument, []).append(length_delimited(1, point))
        for instrument, value, labels in gauges:
            point = attributes(7, labels) + fixed64(2, start_ns) + fixed64(3, now_ns) + double(4, value)
            by_instrument.setdefault(instrument, []).append(length_delimited(1, point))
        metrics = [_metric(instrument, points) for instrument, points in by_instrument.items()]
        scope_metrics = length_delimited(2, self._scope + b"".join(metrics))
        return length_delimited(1, self._resource + scope_metrics)


def _metric(instrument: Instrument, points: list[bytes]) -> bytes:
    head = string(1, instrument.name) + string(2, instrument.description) + string(3, instrument.unit)
    data = b"".join(points)
    if instrument.kind is Kind.HISTOGRAM:
        body = length_delimited(9, data + unsigned(2, CUMULATIVE))
    elif instrument.kind is Kind.COUNTER:
        body = length_delimited(7, data + unsigned(2, CUMULATIVE) + unsigned(3, 1))
    else:
        body = length_delimited(5, data)
    return length_delimited(2, head + body)
