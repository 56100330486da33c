"""The meter tap: every answer, whoever gave it, becomes a `Call` on the session's meter (`llmproxy.meter`) —
a stage's reply as it is sent, the upstream's answer once it has ended (its stream cut into events as it
passes, nothing held back). Observation only: what fails here the chain logs, and the traffic carries on.

What it meters lives in its state, so the pytest plugin gives each test a meter of its own. A run with
telemetry (`llmproxy.telemetry`) hears of each call here too, with the request it answered and its meaning.
"""

import logging
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final, NamedTuple

from llmproxy.cassette.decode import decode_answer
from llmproxy.cassette.stream_capture import StreamCapture
from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.chain.stage import Observer, ResponseHead, Tap
from llmproxy.chain.state import State
from llmproxy.meter import Answered, Call, Meter, Price
from llmproxy.model import Completion
from llmproxy.model.exchange import RawExchange
from llmproxy.providers.registry import chat_codec

if TYPE_CHECKING:
    from llmproxy.telemetry.hub import Telemetry

logger = logging.getLogger(__name__)

SHARED: Final = 1024  # replies served again and again whose reading is kept; past that, start again

_DETAIL: Final = Call._fields.index("detail")  # the fields before it are a served reply's every time

ANSWERED = {
    ReplySource.MOCK: Answered.MOCK,
    ReplySource.CASSETTE: Answered.HIT,
    ReplySource.FAULT: Answered.INJECTED,
    ReplySource.MISS: Answered.MISS,
    ReplySource.ERROR: Answered.ERROR,
    ReplySource.UPSTREAM: Answered.UPSTREAM,
}


class MeterTap(Tap):
    name = "meter"
    EXPLAINED = "each answer's tokens, cost and timing"  # also a plan's, before it is built

    def __init__(self, meter: Meter, telemetry: "Telemetry | None" = None) -> None:
        self.state = State(meter)
        self.telemetry = telemetry
        self._shared: dict[int, _Kept] = {}

    @property
    def meter(self) -> Meter:
        return self.state.value

    def reply(self, incoming: Incoming, reply: Reply) -> Reply:
        if reply.source in ANSWERED:  # not a CLI's telemetry, nor a WebSocket the relay meters message by message
            if reply.shared:
                call, completion = self._served(incoming, reply)
            else:
                read = _read(incoming, reply)
                completion = read.completion
                answered = ANSWERED[reply.source]
                call = _call(incoming, answered, reply.status, completion, *read[1:], _declined(incoming))
                call = self.state.value.add(call)
            if self.telemetry is not None:
                self.telemetry.observe(call, incoming, completion, reply)
        return reply

    def _served(self, incoming: Incoming, reply: Reply) -> tuple[Call, Completion | None]:
        """The call of a reply served again and again (`shared`: a recording), made from what is kept of it:
        its reading, and for the request it last answered, the call's fields but its time and number, and its
        price once the meter knows it is the same at any time (`Meter.timeless`)."""
        raw, route = incoming.raw, incoming.route
        asked = (raw.method, raw.host, incoming.path, incoming.model, route.provider if route is not None else None)
        kept = self._shared.get(id(reply))
        if kept is None or kept.reply is not reply or kept.asked != asked:
            read = kept.read if kept is not None and kept.reply is reply else _read(incoming, reply)
            if len(self._shared) >= SHARED:
                self._shared.clear()
            made = _call(incoming, ANSWERED[reply.source], reply.status, read.completion, *read[1:], "")
            kept = self._shared[id(reply)] = _Kept(reply, read, asked, made[:_DETAIL], None, None)
        meter = self.state.value
        detail = _declined(incoming) if incoming.declines else ""
        if kept.meter is meter and kept.price is not None:
            return meter.again((*kept.fields, detail, datetime.now(UTC)), kept.price), kept.read.completion
        call = meter.add(Call._make((*kept.fields, detail, datetime.now(UTC), 0, None, None)))
        if kept.meter is not meter:  # the reply's first call on this meter: is its price the same at any time?
            price = (call.cost_usd, call.unpriced) if meter.timeless(call) else None
            self._shared[id(reply)] = kept._replace(meter=meter, price=price)
        return call, kept.read.completion

    def open(self, incoming: Incoming, head: ResponseHead | None) -> Observer | None:
        if head is None:
            return _Answer(self.state.value, incoming, None, None, self.telemetry)
        capture = None
        if head.streamed:
            capture = StreamCapture(head.header("content-type") or "", head.header("content-encoding"), head.started)
        return _Answer(self.state.value, incoming, head, capture, self.telemetry)

    def explain(self) -> str:
        if self.telemetry is not None:
            return f"{self.EXPLAINED}; telemetry: {self.telemetry.explain()}"
        return self.EXPLAINED

    def close(self) -> None:
        if self.telemetry is not None:
            self.telemetry.close()


def _understood(incoming: Incoming, reply: Reply) -> Completion | None:
    """What a stage's reply means, when a stage made it from a model's answer."""
    if reply.source in (ReplySource.MOCK, ReplySource.CASSETTE, ReplySource.FAULT):
        try:
            return reply.understood()
        except Exception:  # an answer the codec cannot read: counted, without tokens
            logger.debug("could not read the answer to %s", incoming.path, exc_info=True)
    return None


class _Kept(NamedTuple):
    """What is kept of a reply served again and again (`MeterTap._served`): the reply itself (its id, the key it
    is kept by, stays its own), its reading, what the request it last answered `asked` (its method, host, path,
    model and provider), the call's fields up to its `detail`, and the `price` of its calls on `meter` (None:
    priced each time)."""

    reply: Reply
    read: "_Read"
    asked: tuple[object, ...]
    fields: tuple[object, ...]
    meter: Meter | None
    price: Price | None


class _Read(NamedTuple):
    """What a stage's reply says to the meter: its meaning, and its timing as its events' offsets (as paced)."""

    completion: Completion | None
    streamed: bool
    latency_ms: float | None
    ttft_ms: float | None


def _read(incoming: Incoming, reply: Reply) -> _Read:
    events = reply.events
    first, last = (events[0][0] * 1000, events[-1][0] * 1000) if events else (None, None)
    content_type = reply.header("content-type") or ""
    streamed = events is not None or StreamCapture.streams(content_type)  # `--timing instant` sends it whole
    return _Read(_understood(incoming, reply), streamed, last, first)


def _declined(incoming: Incoming) -> str:
    """Why the stages before the one that answered declined it, each in a line (a miss's reason)."""
    declines = incoming.declines
    return "; ".join(decline.reason.splitlines()[0] for decline in declines) if declines else ""


def replied(incoming: Incoming, reply: Reply, completion: Completion | None) -> Call:
    """A stage's reply as a call: its timing is its events' offsets (as paced), its meaning `completion`."""
    _, streamed, latency_ms, ttft_ms = _read(incoming, reply)
    answered = ANSWERED[reply.source]
    return _call(incoming, answered, reply.status, completion, streamed, latency_ms, ttft_ms, _declined(incoming))


class _Answer:
    """The upstream's answer as it passes: its first piece's time, its events when it streams."""

    __slots__ = ("capture", "first", "head", "incoming", "meter", "telemetry")

    def __init__(
        self,
        meter: Meter,
        incoming: Incoming,
        head: ResponseHead | None,
        capture: StreamCapture | None,
        telemetry: "Telemetry | None" = None,
    ) -> None:
        self.meter = meter
        self.incoming = incoming
        self.head = head
        self.capture = capture
        self.telemetry = telemetry
        self.first: float | None = None

    def chunk(self, data: bytes, at: float) -> bytes:
        if self.first is None:
            self.first = at
        if self.capture is not None:
            self.capture.feed(data, at)
        return data

    async def end(self, exchange: RawExchange) -> None:
        call, completion = self._call(exchange)
        call = self.meter.add(call)
        if self.telemetry is not None:
            self.telemetry.observe(call, self.incoming, completion)

    def _call(self, exchange: RawExchange) -> tuple[Call, Completion | None]:
        response = exchange.response
        incoming = self.incoming
        if response is None:
            error = exchange.error or ""
            return _call(incoming, Answered.UPSTREAM, None, None, False, exchange.total_ms, None, error), None
        events = [event.data for event in self.capture.finish(time.time())] if self.capture is not None else None
        completion = None
        route = incoming.route
        codec = chat_codec(route) if route is not None else None
        if codec is not None:
            try:
                completion = decode_answer(codec, response.status, response.body or b"", events)
            except Exception:  # not what the API sends: counted, without tokens
                logger.debug("could not read the answer to %s", incoming.path, exc_info=True)
        started = self.head.started if self.head is not None else None
        ttft = (self.first - started) * 1000 if events is not None and self.first and started else None
        streamed = events is not None
        call = _call(incoming, Answered.UPSTREAM, response.status, completion, streamed, exchange.total_ms, ttft, "")
        return call, completion


def _call(
    incoming: Incoming,
    answered: Answered,
    status: int | None,
    completion: Completion | None,
    streamed: bool,
    latency_ms: float | None,
    ttft_ms: float | None,
    detail: str,
) -> Call:
    raw, route = incoming.raw, incoming.route
    model = (completion.model if completion is not None and completion.model else None) or incoming.model
    usage, tool_calls = (completion.usage, completion.tool_calls) if completion is not None else (None, ())
    provider = route.provider if route is not None else None
    fields = (raw.method, raw.host, incoming.path, answered, status, provider, model, usage, tool_calls, streamed)
    # every field given, in order: made as the tuple it is, not through `Call`'s defaults (one a call)
    return Call._make((*fields, latency_ms, ttft_ms, detail, datetime.now(UTC), 0, None, None))
