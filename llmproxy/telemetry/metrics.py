"""The metrics: each instrument declared once (`INSTRUMENTS`), what one call adds to them (`observations`), and
a registry that keeps them for Prometheus (`Registry`, the text exposition format 0.0.4). The OTLP export
records the same observations into the SDK's instruments (`llmproxy.telemetry.otlp`), so both kinds of
dashboard read the same figures.

Names: the conventions' current ones (`gen_ai.client.inference.usage.*`, `gen_ai.client.operation.*`) and
v1.41's token histogram (`gen_ai.client.token.usage`) side by side, so a dashboard built on either works.
For Prometheus a name is translated as the OpenTelemetry Prometheus exporters translate it: dots become
underscores, a counter ends in `_total`, a duration in seconds in `_seconds`.

Hand-written rather than prometheus-client: six kinds of line in a documented text format, no extra to install
for `/metrics`, and no second registry beside the one the OTLP export reads.
"""

import bisect
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from llmproxy.meter import Answered, Call
from llmproxy.telemetry.conventions import SOURCES, Facts, error_type

TOKEN_BUCKETS: Final = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
SHAPES: Final = 4096  # shapes of call whose additions are kept (`Registry.record`); past that, start again
SECOND_BUCKETS: Final = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)


class Kind(StrEnum):
    COUNTER = "counter"
    HISTOGRAM = "histogram"
    GAUGE = "gauge"


@dataclass(frozen=True, slots=True, eq=False)
class Instrument:
    """One of the module's instruments, each declared once: compared and hashed as itself (a series is looked
    up by its instrument for every figure of every call)."""

    name: str  # OpenTelemetry's
    kind: Kind
    unit: str
    description: str
    buckets: tuple[float, ...] = ()

    @property
    def prometheus(self) -> str:
        name = self.name.replace(".", "_")
        if self.unit == "s":
            name += "_seconds"
        elif self.unit == "USD":
            name += "_usd"
        return name + "_total" if self.kind is Kind.COUNTER else name


def _tokens(name: str, what: str) -> Instrument:
    return Instrument(name, Kind.COUNTER, "{token}", what)


def _gauge(name: str, unit: str, what: str) -> Instrument:
    return Instrument(name, Kind.GAUGE, unit, what)


TOKEN_USAGE: Final = Instrument(
    "gen_ai.client.token.usage", Kind.HISTOGRAM, "{token}", "Tokens per call, by gen_ai.token.type", TOKEN_BUCKETS
)
INPUT_TOKENS: Final = Instrument(
    "gen_ai.client.inference.usage.input_tokens", Kind.HISTOGRAM, "{token}", "Input tokens per call", TOKEN_BUCKETS
)
OUTPUT_TOKENS: Final = Instrument(
    "gen_ai.client.inference.usage.output_tokens", Kind.HISTOGRAM, "{token}", "Output tokens per call", TOKEN_BUCKETS
)
DETAILED: Final = "gen_ai.client.inference.usage.detailed."
INPUT_TOTAL: Final = _tokens(DETAILED + "input_tokens", "Input tokens, cache reads and writes included")
OUTPUT_TOTAL: Final = _tokens(DETAILED + "output_tokens", "Output tokens, reasoning included")
CACHE_READ_TOTAL: Final = _tokens(DETAILED + "cache_read.input_tokens", "Input tokens read from a prompt cache")
CACHE_WRITE_TOTAL: Final = _tokens(DETAILED + "cache_write.input_tokens", "Input tokens written to a prompt cache")
REASONING_TOTAL: Final = _tokens(DETAILED + "reasoning.output_tokens", "Output tokens spent reasoning")
DURATION: Final = Instrument(
    "gen_ai.client.operation.duration", Kind.HISTOGRAM, "s", "Time until the answer ended", SECOND_BUCKETS
)
FIRST_CHUNK: Final = Instrument(
    "gen_ai.client.operation.time_to_first_chunk",
    Kind.HISTOGRAM,
    "s",
    "Time to a streamed answer's first chunk",
    SECOND_BUCKETS,
)
CALLS: Final = Instrument("llmproxy.calls", Kind.COUNTER, "{call}", "Calls answered, by llmproxy.source")
COST: Final = Instrument("llmproxy.cost", Kind.COUNTER, "USD", "Estimated cost of the priced calls")
UNPRICED: Final = Instrument("llmproxy.unpriced", Kind.COUNTER, "{call}", "Calls with usage that could not be priced")
MISSES: Final = Instrument("llmproxy.misses", Kind.COUNTER, "{call}", "Requests nothing could answer (refused)")
FAULTS: Final = Instrument("llmproxy.faults", Kind.COUNTER, "{fault}", "Faults injected, by llmproxy.fault.kind")
BUDGET_SPENT: Final = _gauge("llmproxy.budget.spent", "USD", "What the run's budget has spent")
BUDGET_LIMIT: Final = _gauge("llmproxy.budget.limit", "USD", "The run's budget")
BUDGET_UNPRICED: Final = _gauge("llmproxy.budget.unpriced", "{call}", "Calls the budget could not price (not in it)")
QUOTA_USED: Final = _gauge("llmproxy.quota.used", "{unit}", "What a quota's current window has counted")
QUOTA_LIMIT: Final = _gauge("llmproxy.quota.limit", "{unit}", "A quota's limit per window")
QUOTA_RESET: Final = _gauge("llmproxy.quota.reset", "s", "Until a quota's current window ends")
SAVING: Final = _gauge("llmproxy.optimisation.saving", "USD", "What the latest report's findings could save")
SAVING_FRACTION: Final = _gauge("llmproxy.optimisation.saving_fraction", "1", "The latest report's saving, of spend")
CACHE_HIT_RATIO: Final = _gauge("llmproxy.optimisation.cache_hit_ratio", "1", "The latest report's cached input share")
ONE_SHOT_RATE: Final = _gauge(
    "llmproxy.optimisation.one_shot_rate", "1", "The latest report's share of calls not retried"
)
FINDINGS: Final = _gauge("llmproxy.optimisation.findings", "{finding}", "The latest report's findings, by severity")
DROPPED_SPANS: Final = Instrument(
    "llmproxy.telemetry.dropped_spans", Kind.COUNTER, "{span}", "Spans the OTLP export could not deliver"
)

INSTRUMENTS: Final = (
    TOKEN_USAGE,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    INPUT_TOTAL,
    OUTPUT_TOTAL,
    CACHE_READ_TOTAL,
    CACHE_WRITE_TOTAL,
    REASONING_TOTAL,
    DURATION,
    FIRST_CHUNK,
    CALLS,
    COST,
    UNPRICED,
    MISSES,
    FAULTS,
    DROPPED_SPANS,
)

type Labels = tuple[tuple[str, str], ...]
type Observation = tuple[Instrument, float, Labels]
type Gauge = tuple[Instrument, float, Labels]  # a figure read as it is now
type Gauges = Callable[[], Sequence[Gauge]]
type Series = tuple[Instrument, Labels, float, int, list[int]]  # sum, count, a histogram's bucket counts


def labels(call: Call, facts: Facts) -> Labels:
    """The attributes every call's figures carry: few, and of few values each (a model, not a response id)."""
    found = [("llmproxy.source", SOURCES[call.answered]), ("server.address", call.host)]
    if facts.operation is not None:
        found.append(("gen_ai.operation.name", facts.operation))
    if facts.provider is not None:
        found.append(("gen_ai.provider.name", facts.provider))
    if call.model:
        found.append(("gen_ai.request.model", call.model))
    return tuple(found)


def observations(call: Call, facts: Facts) -> Iterator[Observation]:
    """What `call` adds to each instrument."""
    base = labels(call, facts)
    yield CALLS, 1, base
    error = error_type(call)
    if call.latency_ms is not None and call.answered is not Answered.MISS:
        yield DURATION, call.latency_ms / 1000, (*base, ("error.type", error)) if error else base
    if call.ttft_ms is not None and call.streamed:
        yield FIRST_CHUNK, call.ttft_ms / 1000, base
    if (usage := call.usage) is not None:
        yield TOKEN_USAGE, usage.input_tokens, (*base, ("gen_ai.token.type", "input"))
        yield TOKEN_USAGE, usage.output_tokens, (*base, ("gen_ai.token.type", "output"))
        yield INPUT_TOKENS, usage.input_tokens, base
        yield OUTPUT_TOKENS, usage.output_tokens, base
        yield INPUT_TOTAL, usage.input_tokens, base
        yield OUTPUT_TOTAL, usage.output_tokens, base
        yield CACHE_READ_TOTAL, usage.cache_read_tokens, base
        yield CACHE_WRITE_TOTAL, usage.cache_write_tokens, base
        yield REASONING_TOTAL, usage.reasoning_tokens, base
    if call.cost_usd is not None:
        yield COST, float(call.cost_usd), base
    if call.unpriced is not None:
        yield UNPRICED, 1, base
    if call.answered is Answered.MISS:
        yield MISSES, 1, base
    for kind in facts.faults:
        yield FAULTS, 1, (*base, ("llmproxy.fault.kind", kind))


def _shape(call: Call, facts: Facts) -> tuple[object, ...]:
    """All that `observations` reads of a call but its durations: two calls of one shape add the same to the
    same series, and their durations to the same series."""
    return (
        call.answered,
        call.host,
        facts.operation,
        facts.provider,
        call.model,
        call.status,
        call.latency_ms is not None,
        call.ttft_ms is not None and call.streamed,
        call.usage,
        call.cost_usd,
        call.unpriced is not None,
        facts.faults,
    )


class _Series:
    __slots__ = ("buckets", "count", "sum")

    def __init__(self, bounds: int) -> None:
        self.sum = 0.0
        self.count = 0
        self.buckets = [0] * (bounds + 1) if bounds else []  # a histogram's: each bound's, then above the last


type _Addition = tuple[_Series, float, int]  # the series, the value, its histogram bucket (-1: none)


class Shape:
    """What one shape of call adds (`_shape`), as `Registry.record` keeps it. The whole-number additions (calls,
    tokens: most of a call's figures) are only counted per call (`served`) and folded in, multiplied, when the
    registry is read: whole numbers add up to the same sum in any order and by any grouping, so the figures
    read are those of adding each observation. The others (a cost, the durations) are added per call, in the
    order the calls came: a float's sum depends on it. `live`: still the registry's (it starts again past
    `SHAPES`); a caller keeping a shape for the calls to come asks for a new one when it is not."""

    __slots__ = ("counted", "durations", "each", "live", "served")

    def __init__(self, counted: list[_Addition], each: list[_Addition], durations: list[tuple[_Series, Instrument]]):
        self.counted = counted
        self.each = each
        self.durations = durations
        self.served = 0
        self.live = True

    def fold(self) -> None:
        """Add the whole-number additions of the calls served since the last fold; under the registry's lock."""
        served = self.served
        if not served:
            return
        for series, value, bucket in self.counted:
            series.sum += value * served
            series.count += served
            if bucket >= 0:
                series.buckets[bucket] += served
        self.served = 0


class Registry:
    """The figures since the run began (`started`, nanoseconds), for `/metrics` and the OTLP export alike.
    `record` from one thread (the request's), `series` and `exposition` from any (the control port's, the
    export's). `gauges`: what is read as it is at each reading (the budget, the quotas…)."""

    def __init__(self, gauges: Gauges | None = None) -> None:
        self.started = time.time_ns()
        self._series: dict[tuple[Instrument, Labels], _Series] = {}
        self._shapes: dict[tuple[object, ...], Shape] = {}
        self._lock = threading.Lock()
        self._gauges = gauges

    def shape(self, call: Call, facts: Facts) -> Shape:
        """The shape of `call` (made the first time), for `record`: a caller that knows its calls to come are
        of this shape (a recording replayed again and again) keeps it, and the registry does not look it up."""
        key = _shape(call, facts)
        found = self._shapes.get(key)
        if found is not None:
            return found
        with self._lock:
            if len(self._shapes) >= SHAPES:
                self._fold()
                for dropped in self._shapes.values():
                    dropped.live = False
                self._shapes.clear()
            counted: list[_Addition] = []
            each: list[_Addition] = []
            durations: list[tuple[_Series, Instrument]] = []
            for instrument, value, labels in observations(call, facts):
                addition = self._addition(instrument, value, labels)
                if instrument is DURATION or instrument is FIRST_CHUNK:
                    durations.append((addition[0], instrument))
                elif isinstance(value, int):
                    counted.append(addition)
                else:
                    each.append(addition)
            found = self._shapes[key] = Shape(counted, each, durations)
        return found

    def record(self, call: Call, facts: Facts, shape: Shape | None = None) -> None:
        """Everything `call` adds (`observations`), under one lock. What a call adds is worked out once per
        shape of call (`Shape`; `shape`: the call's, when the caller kept it) and only counted per call, but
        for its cost and its durations, its own: read off each call."""
        if shape is None or not shape.live:
            shape = self.shape(call, facts)
        with self._lock:
            shape.served += 1
            for series, value, bucket in shape.each:
                series.sum += value
                series.count += 1
                if bucket >= 0:
                    series.buckets[bucket] += 1
            for series, instrument in shape.durations:
                value = (call.latency_ms if instrument is DURATION else call.ttft_ms) or 0.0
                value /= 1000
                series.sum += value
                series.count += 1
                series.buckets[bisect.bisect_left(instrument.buckets, value)] += 1

    def _fold(self) -> None:
        """Fold every shape's counted calls into the series; under the lock, before the series are read."""
        for shape in self._shapes.values():
            shape.fold()

    def add(self, instrument: Instrument, value: float, labels: Labels = ()) -> None:
        with self._lock:
            self._add(instrument, value, labels)

    def _add(self, instrument: Instrument, value: float, labels: Labels) -> None:
        series, value, bucket = self._addition(instrument, value, labels)
        series.sum += value
        series.count += 1
        if bucket >= 0:
            series.buckets[bucket] += 1

    def _addition(self, instrument: Instrument, value: float, labels: Labels) -> tuple["_Series", float, int]:
        """The series `value` adds to (made when it is the first), and its bucket (-1: not a histogram)."""
        series = self._series.get((instrument, labels))
        if series is None:
            series = self._series[(instrument, labels)] = _Series(len(instrument.buckets))
        bucket = bisect.bisect_left(instrument.buckets, value) if instrument.buckets else -1
        return series, value, bucket

    def value(self, instrument: Instrument, **wanted: str) -> float:
        """The sum of `instrument` over the series whose labels include `wanted` (dots as underscores)."""
        with self._lock:
            self._fold()
            return sum(
                series.sum
                for (found, labels), series in self._series.items()
                if found is instrument and wanted.items() <= {_label(key): val for key, val in labels}.items()
            )

    def series(self) -> list[Series]:
        """Every series as it is now, in the order of `INSTRUMENTS`, then of their labels."""
        with self._lock:
            self._fold()
            taken = [
                (instrument, labels, series.sum, series.count, list(series.buckets))
                for (instrument, labels), series in self._series.items()
            ]
        order = {instrument: index for index, instrument in enumerate(INSTRUMENTS)}
        return sorted(taken, key=lambda found: (order[found[0]], found[1]))

    def gauges(self) -> Sequence[Gauge]:
        return self._gauges() if self._gauges is not None else ()

    def exposition(self) -> bytes:
        """Every series in Prometheus's text format."""
        lines: list[str] = []
        described: set[Instrument] = set()
        for instrument, labels, total, count, buckets in self.series():
            name = instrument.prometheus
            if instrument not in described:
                described.add(instrument)
                lines += _described(instrument)
            if instrument.kind is not Kind.HISTOGRAM:
                lines.append(f"{name}{_labels(labels)} {_number(total)}")
                continue
            cumulative = 0
            for bound, counted in zip(instrument.buckets, buckets, strict=False):
                cumulative += counted
                lines.append(f"{name}_bucket{_labels((*labels, ('le', _number(bound))))} {cumulative}")
            lines.append(f"{name}_bucket{_labels((*labels, ('le', '+Inf')))} {count}")
            lines.append(f"{name}_sum{_labels(labels)} {_number(total)}")
            lines.append(f"{name}_count{_labels(labels)} {count}")
        for instrument, value, labels in self.gauges():
            if instrument not in described:
                described.add(instrument)
                lines += _described(instrument)
            lines.append(f"{instrument.prometheus}{_labels(labels)} {_number(value)}")
        return ("\n".join(lines) + "\n").encode() if lines else b""


def _described(instrument: Instrument) -> list[str]:
    name = instrument.prometheus
    return [f"# HELP {name} {instrument.description} ({instrument.unit})", f"# TYPE {name} {instrument.kind}"]


def _label(key: str) -> str:
    return key.replace(".", "_")


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    escaped = (
        f'{_label(key)}="{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'.replace(
            "\n", "\\n"
        )
        for key, value in labels
    )
    return "{" + ",".join(escaped) + "}"


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))
