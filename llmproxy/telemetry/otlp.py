"""The OTLP export, with the OpenTelemetry SDK (the `llmproxy[otel]` extra): imported only when a run exports.

Spans: each call becomes one CLIENT span with the times it began and ended, a child of the client's
`traceparent` when it sent one. They are made on this module's own thread and sent in batches over OTLP/HTTP
by the same thread, so a collector that is down, slow or answering 500 holds only that thread: calls that come
meanwhile wait in a bounded queue, and when it is full they are dropped and counted (`dropped`), as are the
spans of a batch the collector did not take. The first loss is one warning line; the SDK's own log lines, one
per failed batch, are kept out of the run's output.

Metrics: the instruments of `llmproxy.telemetry.metrics`, recorded into the SDK's and exported every
`OTEL_METRIC_EXPORT_INTERVAL` milliseconds (the SDK's default: a minute) and once more at the end.
"""

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Final

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from llmproxy import __version__
from llmproxy.meter import Call
from llmproxy.telemetry.conventions import Facts, attributes, duplicate_old_names, error_type, span_name
from llmproxy.telemetry.metrics import (
    DROPPED_SPANS,
    GAUGES,
    INSTRUMENTS,
    Gauges,
    Instrument,
    Kind,
    Labels,
    observations,
)

logger = logging.getLogger(__name__)

QUEUE: Final = 4096  # calls waiting for the exporting thread; beyond, dropped and counted
BATCH: Final = 512  # spans in one export at most
LINGER: Final = 1.0  # seconds a batch waits for more calls before it is sent
CLOSING: Final = 5.0  # seconds the end of a run waits for what is still queued to be sent
SCOPE: Final = "llmproxy"
_END: Final = object()

type Item = tuple[Call, Facts]


def _quiet_sdk() -> None:
    """The SDK logs each failed export; the run says it once, itself."""
    for name in ("opentelemetry.exporter", "opentelemetry.sdk", "opentelemetry.exporter.otlp.common"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def resource() -> Resource:
    """`service.name` llmproxy unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` says otherwise."""
    given = {"service.version": __version__}
    named = "OTEL_SERVICE_NAME" in os.environ or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    if not named:
        given["service.name"] = SCOPE
    return Resource.create(given)


def _signal(endpoint: str | None, path: str) -> str | None:
    """`--otlp URL` is a base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` is: each signal under its own path."""
    return None if endpoint is None else endpoint.rstrip("/") + path


class _Collected(SpanProcessor):
    """Keeps the spans ended on the exporting thread, for it to send as one batch."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.spans.append(span)


class _CountedMetrics(MetricExporter):
    """The metric exporter, its failures reported as the spans' are."""

    def __init__(self, inner: OTLPMetricExporter, failed: Callable[[str], None]) -> None:
        super().__init__(
            preferred_temporality=inner._preferred_temporality,  # the wrapped one's choices
            preferred_aggregation=inner._preferred_aggregation,
        )
        self.inner = inner
        self.failed = failed

    def export(self, metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        result = self.inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        if result is not MetricExportResult.SUCCESS:
            self.failed("metrics")
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.inner.shutdown(timeout_millis=timeout_millis, **kwargs)


class OtlpExport:
    """Spans and metrics of the calls `add`ed, sent to `endpoint` (None: as the `OTEL_EXPORTER_OTLP_*`
    variables say). `run`: the run's own attributes, on every span. `gauges`: read at each metrics export."""

    def __init__(
        self,
        endpoint: str | None,
        run: Sequence[tuple[str, str]] = (),
        gauges: Gauges | None = None,
        span_exporter: SpanExporter | None = None,
        metrics: bool = True,
    ) -> None:
        _quiet_sdk()
        self.run = dict(run)
        self.duplicate = duplicate_old_names()
        self.dropped = 0
        self._warned = False
        self._lock = threading.Lock()
        self._queue: queue.Queue[Any] = queue.Queue(QUEUE)
        self._collected = _Collected()
        self._tracers = TracerProvider(resource=resource())
        self._tracers.add_span_processor(self._collected)
        self._tracer = self._tracers.get_tracer(SCOPE, __version__)
        self._exporter = span_exporter or OTLPSpanExporter(endpoint=_signal(endpoint, "/v1/traces"))
        self._propagator = TraceContextTextMapPropagator()
        self._meters: MeterProvider | None = None
        self._instruments: dict[Instrument, Any] = {}
        if metrics:
            exporter = _CountedMetrics(OTLPMetricExporter(endpoint=_signal(endpoint, "/v1/metrics")), self._failed)
            self._meters = MeterProvider([PeriodicExportingMetricReader(exporter)], resource=resource())
            meter = self._meters.get_meter(SCOPE, __version__)
            for instrument in INSTRUMENTS:
                made: Any
                if instrument.kind is Kind.COUNTER:
                    made = meter.create_counter(instrument.name, instrument.unit, instrument.description)
                else:
                    made = meter.create_histogram(
                        instrument.name,
                        instrument.unit,
                        instrument.description,
                        explicit_bucket_boundaries_advisory=instrument.buckets,
                    )
                self._instruments[instrument] = made
            if gauges is not None:
                for instrument in GAUGES:
                    meter.create_observable_gauge(
                        instrument.name, [_gauge(gauges, instrument)], instrument.unit, instrument.description
                    )
        self._thread = threading.Thread(target=self._work, name="llmproxy-otlp", daemon=True)
        self._thread.start()

    def add(self, call: Call, facts: Facts, wait: bool = False) -> None:
        """Queue a call's span and figures. A proxy's calls never wait: a full queue drops the call, counted;
        `wait`: wait for room instead (a recorded run, sent after the fact)."""
        try:
            self._queue.put((call, facts), block=wait)
        except queue.Full:
            self._lost(1, "the export queue is full")

    def close(self, patience: float = CLOSING) -> None:
        """Send what is queued (waiting `patience` seconds at most), the last metrics, and stop."""
        with contextlib.suppress(queue.Full):
            self._queue.put(_END, timeout=patience)
        self._thread.join(patience)
        left = self._queue.qsize()
        if left:
            self._lost(left, "the run ended before they were sent")
        closing = threading.Thread(target=self._shutdown, name="llmproxy-otlp-close", daemon=True)
        closing.start()
        closing.join(CLOSING)

    def _shutdown(self) -> None:
        try:
            self._exporter.shutdown()
            if self._meters is not None:
                self._meters.shutdown(timeout_millis=CLOSING * 1000)
            self._tracers.shutdown()
        except Exception:
            logger.debug("closing the OTLP export failed", exc_info=True)

    def _work(self) -> None:
        ended = False
        while not ended:
            item = self._queue.get()
            if item is _END:
                break
            batch: list[Item] = [item]
            deadline = time.monotonic() + LINGER
            while len(batch) < BATCH:
                try:
                    more = self._queue.get(timeout=max(deadline - time.monotonic(), 0))
                except queue.Empty:
                    break
                if more is _END:
                    ended = True
                    break
                batch.append(more)
            try:
                self._send(batch)
            except Exception:  # telemetry observes: what fails here is counted, never raised
                logger.debug("exporting %d spans failed", len(batch), exc_info=True)
                self._lost(len(batch), "they could not be exported")

    def _send(self, batch: list[Item]) -> None:
        counted: dict[tuple[Instrument, Labels], float] = {}  # a counter's adds summed over the batch: one call each
        for call, facts in batch:
            self._span(call, facts)
            if self._instruments:
                for instrument, value, labels in observations(call, facts):
                    if instrument.kind is Kind.COUNTER:
                        counted[(instrument, labels)] = counted.get((instrument, labels), 0) + value
                    else:
                        self._record(instrument, value, labels)
        for (instrument, labels), total in counted.items():
            self._record(instrument, total, labels)
        spans, self._collected.spans = self._collected.spans, []
        if spans and self._exporter.export(spans) is not SpanExportResult.SUCCESS:
            self._lost(len(spans), "the collector did not take them")

    def _span(self, call: Call, facts: Facts) -> None:
        context = None
        if facts.traceparent is not None:
            carrier = {"traceparent": facts.traceparent}
            if facts.tracestate is not None:
                carrier["tracestate"] = facts.tracestate
            context = self._propagator.extract(carrier)
        end = _nanoseconds(call.at)
        start = end - int((call.latency_ms or 0) * 1_000_000)
        span = self._tracer.start_span(
            span_name(call, facts),
            context=context,
            kind=SpanKind.CLIENT,
            attributes=attributes(call, facts, self.run, self.duplicate),
            start_time=start,
        )
        if (error := error_type(call)) is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end(end_time=end)

    def _record(self, instrument: Instrument, value: float, labels: Labels) -> None:
        made = self._instruments[instrument]
        if instrument.kind is Kind.COUNTER:
            made.add(value, dict(labels))
        else:
            made.record(value, dict(labels))

    def _failed(self, what: str) -> None:
        self._warn(f"the OTLP collector did not take the {what}")

    def _lost(self, count: int, why: str) -> None:
        with self._lock:
            self.dropped += count
        if DROPPED_SPANS in self._instruments:
            self._instruments[DROPPED_SPANS].add(count)
        self._warn(f"telemetry spans dropped: {why} (counted in llmproxy.telemetry.dropped_spans; no more warnings)")

    def _warn(self, message: str) -> None:
        with self._lock:
            if self._warned:
                return
            self._warned = True
        logger.warning("%s", message)


def _gauge(gauges: Gauges, instrument: Instrument) -> Callable[[CallbackOptions], list[Observation]]:
    def observe(options: CallbackOptions) -> list[Observation]:
        return [Observation(value) for found, value in gauges() if found is instrument]

    return observe


def _nanoseconds(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000_000)
