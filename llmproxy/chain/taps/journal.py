"""The journal tap: every answer, whoever gave it, kept in the session's journal (`llmproxy.journal`) as the
client got it — a stage's reply when it is sent, the upstream's answer once it has ended (its stream cut into
events as it passes, nothing held back). Each is converted and redacted as the recorder converts and redacts
what it writes (`llmproxy.cassette.convert.to_exchange`, the plan's redactor) when the control API first reads
it, not on the proxy's event loop. Observation only: what fails here the chain logs, and the traffic carries
on.

It is on every request's path, so it keeps a stage's reply as little as it can, in one tuple: the request, the
reply's own parts (not the completion and the notes it carries for the other taps), the time as a number and
the faults put in; the exchange is built from them when first read. A body llmproxy encoded for this one
request is copied to its own size: an encoder's bytes (orjson's) may hold a buffer several times longer, which
the entry would keep as long as it lives.
"""

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import orjson

from llmproxy.cassette.convert import shown_model, to_exchange, url
from llmproxy.cassette.decode import decode_answer
from llmproxy.cassette.model import Exchange, Injection
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.stream_capture import StreamCapture, cut, with_events, with_pieces
from llmproxy.chain.incoming import Incoming, detected
from llmproxy.chain.reply import Events, Headers, Reply, ReplySource, header
from llmproxy.chain.stage import Observer, ResponseHead, Tap
from llmproxy.chain.taps.record import replied
from llmproxy.errors import LlmproxyError
from llmproxy.journal import Capture, Glance, Journal, Seen, Source
from llmproxy.model import Route, Usage
from llmproxy.model.exchange import RawExchange, RawPieces, RawRequest
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import with_body

if TYPE_CHECKING:
    from llmproxy.intercept.faults import Injected

SOURCES: Final = {
    ReplySource.MOCK: Source.MOCKED,
    ReplySource.CASSETTE: Source.REPLAYED,
    ReplySource.FAULT: Source.INJECTED,
    ReplySource.MISS: Source.MISSED,
    ReplySource.BACKGROUND: Source.BACKGROUND,
    ReplySource.ERROR: Source.ERROR,
    ReplySource.UPSTREAM: Source.LIVE,
}


class JournalTap(Tap):
    name = "journal"

    def __init__(self, journal: Journal, redactor: Redactor) -> None:
        self.journal = journal
        self.redactor = redactor
        self._replied = _Reader(_replied, _replied_request, _replied_seen, redactor, _replied_glance)
        self._upstream = _Reader(_upstream, _upstream_request, _upstream_seen, redactor)

    def reply(self, incoming: Incoming, reply: Reply) -> Reply:
        status, headers, body, events, answered_by, reason, _, _, _, _, shared, _, drop, recorded = reply  # one step
        source = SOURCES.get(answered_by)
        if source is None:  # a WebSocket the relay takes over: its messages are journalled one by one
            return reply
        if body is not None and not shared:
            body = b"%b" % body  # a copy of its own size
        injected = tuple(incoming.injected) if incoming.injected else ()
        _, _, _, route, parsed, _, _, model = incoming.decoded  # what the chain read of it: the gates' too
        self.journal.add(
            (source, incoming.test_id, self._replied, incoming.door, incoming.raw, status, headers, body, events,
             reason, drop, time.time(), injected, recorded, route, model if type(parsed) is dict else None)
        )  # fmt: skip
        return reply

    def open(self, incoming: Incoming, head: ResponseHead | None) -> Observer | None:
        if head is not None and head.status == 101:  # a protocol switch (WebSocket): not an HTTP exchange
            return None
        pieces = None
        if head is not None and head.streamed:
            pieces = RawPieces(head.header("content-type") or "", head.header("content-encoding"), head.started, [], [])
        return _Live(self, incoming, pieces)

    def explain(self) -> str:
        return self.explained(self.journal.capacity)

    @staticmethod
    def explained(capacity: int) -> str:
        """Its line in `--explain-chain`, also a plan's before it is built."""
        return f"the last {capacity} exchanges, redacted, for the control API"

    def _keep(self, incoming: Incoming, raw: RawExchange) -> None:
        """The upstream's answer, once it has ended."""
        if incoming.injected and not raw.injected:  # faults put into a live answer as it passed
            raw = replace(raw, injected=tuple(fault.record() for fault in incoming.injected))
        route = model = None  # unread: a request only forwarded is not parsed here, on the proxy's event loop
        if incoming.body_read:
            _, _, _, route, parsed, _, _, model = incoming.decoded
            model = model if type(parsed) is dict else None
        self.journal.add((Source.LIVE, incoming.test_id, self._upstream, incoming.door, raw, route, model))


type _Replied = tuple[
    Source, str | None, "_Reader", str | None, RawRequest, int, Headers, bytes | None, Events | None, str, bool, float,
    tuple["Injected", ...], tuple[float | None, float | None] | None, Route | None, str | None,
]  # fmt: skip
"""A stage's reply as the tap captures it: the journal's four parts; the request; the reply's status, headers,
body, events, reason and whether the connection was dropped; when (`time.time()`); the faults put in; a
replay's recorded timings; then what the chain read of the request (`_Said`)."""

type _Upstream = tuple[Source, str | None, "_Reader", str | None, RawExchange, Route | None, str | None]
"""The upstream's answer as the tap captures it: the journal's four parts, the exchange the door built, then
what the chain read of the request (`_Said`)."""

# `_Said`, the last two parts of both: the API the chain read the request as (`Incoming.route`: what the gates
# read, so they do not parse the request again) and the model it asks for, None unless its body was a JSON
# object the chain read (a gate then reads the request itself, and says what the whole reading says of it).


class _Place(NamedTuple):
    """What a listing shows of the requests to one place — an API's route, a model, a URL — and reads their
    answers with, found once for all of them (`_Reader.place`)."""

    route: Route  # held, so that the identity it is found by names no other route while it is kept
    url: str
    provider: str
    operation: str
    vendor: str | None
    model: str
    streaming: bool
    codec: ChatCodec | None


class _Reader:
    """Reads back what the tap captured of an exchange, rebuilt as captured by `rebuild`, its request read by
    `request`: one for every entry of a kind, so a request makes no closure."""

    __slots__ = ("_places", "glanced", "rebuild", "redactor", "request", "seen")

    def __init__(
        self,
        rebuild: Callable[[Any], RawExchange],
        request: Callable[[Any], RawRequest],
        seen: Callable[[Any], Seen],
        redactor: Redactor,
        glanced: Callable[[Any, "_Reader"], Glance | None] | None = None,
    ) -> None:
        self.rebuild = rebuild
        self.request = request
        self.seen = seen
        self.redactor = redactor
        self.glanced = glanced
        self._places: dict[tuple[object, ...], _Place] = {}

    def place(self, route: Route, model: str, request: RawRequest) -> _Place:
        """The place of a request the chain read as `route` asking for `model`: its URL and model as shown, its
        API's names and codec. Found by the route's identity (the chain's detection hands out one route object
        for each API and place: hashing one by value runs Python, for every entry), the model and the URL."""
        key = (id(route), model, request.scheme, request.host, request.port, request.path)
        place = self._places.get(key)
        if place is None or place.route is not route:
            redactor = self.redactor
            place = _Place(
                route, url(request, redactor), route.provider.value, route.operation.value, route.vendor,
                shown_model(redactor, route.model or model), bool(route.streaming), chat_codec(route),
            )  # fmt: skip
            if len(self._places) >= _PLACES:
                self._places.clear()
            self._places[key] = place
        return place

    def captured(self, capture: Capture) -> RawExchange:
        return self.rebuild(capture)

    def exchange(self, capture: Capture, seq: int) -> Exchange:
        return to_exchange(self.rebuild(capture), seq, self.redactor)

    def glance(self, capture: Capture) -> Glance:
        """Read off the capture where `glanced` can (nothing rebuilt), else from the exchange rebuilt whole."""
        glanced = self.glanced(capture, self) if self.glanced is not None else None
        return glanced if glanced is not None else glance(self.rebuild(capture), self.redactor)


_PLACES: Final = 256  # places a reader keeps; more, and they are all forgotten at once


def _replied(capture: _Replied) -> RawExchange:
    _, _, _, _, request, status, headers, body, events, reason, drop, at, injected, _, _, _ = capture
    reply = Reply(status, headers, body, events, reason=reason, drop=drop)
    return _as_events(replied(request, reply, datetime.fromtimestamp(at, UTC), injected))


def _replied_request(capture: _Replied) -> RawRequest:
    return capture[4]


def _replied_seen(capture: _Replied) -> Seen:
    _, _, _, _, request, status, headers, body, events, _, drop, at, _, _, route, model = capture
    started = datetime.fromtimestamp(at, UTC)
    if drop:
        return _seen(Seen, (request, None, (), None, False, None, started, None, route, model))
    streamed = events is not None
    return _seen(
        Seen, (request, status, headers, None if streamed else body, streamed, None, started, None, route, model)
    )


_seen: Final = tuple.__new__
"""`Seen(...)` without the named tuple's `__new__` in Python around it: half of making one, which a gate does for
every entry it judges. Given every field, in order."""


def _replied_glance(capture: _Replied, reader: _Reader) -> Glance:
    """A stage's answer glanced at: a replay's with the timings it was recorded with (it answers at once)."""
    glanced = _plain_glance(capture, reader) or glance(_replied(capture), reader.redactor)
    recorded = capture[13]
    if recorded is None:
        return glanced
    total, first = recorded
    return glanced._replace(latency_ms=total, ttfb_ms=first, latency_recorded=True)


def _plain_glance(capture: _Replied, reader: _Reader) -> Glance | None:
    """A stage's plain answer glanced at off its parts, as `glance` reads it rebuilt (`replied` times it at 0 ms);
    None for one that dropped the connection, had faults put in, or is a stream (sent whole or paced), which
    are read rebuilt. What the chain read of its request (`_Said`) finds its place (`_Reader.place`)."""
    _, _, _, _, request, status, headers, body, events, _, drop, at, injected, _, route, model = capture
    if drop or injected or events is not None or _streams(headers):
        return None
    started = datetime.fromtimestamp(at, UTC)
    if route is None or model is None or request.undecodable:
        return _glanced(request, reader.redactor, started, status, body, None, False, 0.0, 0.0, None, ())
    _, shown_url, provider, operation, vendor, shown, streaming, codec = reader.place(route, model, request)
    return _glance(
        Glance,
        (started, request.method, shown_url, provider, operation, vendor, shown, status, streaming, 0.0, 0.0,
         _usage(codec, status, body, None), None, (), False),
    )  # fmt: skip


_glance: Final = tuple.__new__
"""`Glance(...)` without the named tuple's `__new__` in Python around it (as `_seen`). Given every field, in
order."""


def _streams(headers: Headers) -> bool:
    """Whether `headers` announce an event stream (`StreamCapture.streams` of the first content type), found once
    for each distinct set of headers: a run's answers come with the same few."""
    streams = _STREAMS.get(headers)
    if streams is None:
        streams = StreamCapture.streams(header(headers, "content-type") or "")
        if len(_STREAMS) >= _PLACES:
            _STREAMS.clear()
        _STREAMS[headers] = streams
    return streams


_STREAMS: dict[Headers, bool] = {}


def _upstream(capture: _Upstream) -> RawExchange:
    exchange, _ = cut(capture[4])  # a stream kept as its pieces
    return _as_events(exchange)


def _upstream_request(capture: _Upstream) -> RawRequest:
    return capture[4].request


def _upstream_seen(capture: _Upstream) -> Seen:
    return seen(capture[4])._replace(route=capture[5], model=capture[6])


def seen(raw: RawExchange) -> Seen:
    """What the gates read of an exchange built whole (`Reader.seen`)."""
    response = raw.response
    if response is None:
        return Seen(raw.request, None, (), None, False, None, raw.started_at, raw.websocket)
    streamed = response.events is not None or response.pieces is not None
    return Seen(
        raw.request, response.status, response.headers, response.body, streamed, response.undecodable,
        raw.started_at, raw.websocket,
    )  # fmt: skip


def glance(raw: RawExchange, redactor: Redactor) -> Glance:
    """What a listing shows of `raw`, as `to_exchange` would show it: the API detected as it detects it, the
    URL and the model redacted by the same redactor (the model as a JSON field of the body, by the same rules
    as the body's), and the usage the answer reports, read from its bytes."""
    response = raw.response
    injected = tuple(Injection.model_validate(record).kind for record in raw.injected)
    if response is None:
        return _glanced(raw.request, redactor, raw.started_at, None, None, None, False, raw.total_ms, raw.ttfb_ms,
                        raw.error, injected)  # fmt: skip
    events = [event.data for event in response.events] if response.events is not None else None
    return _glanced(
        raw.request, redactor, raw.started_at, response.status, response.body, events, bool(response.undecodable),
        raw.total_ms, raw.ttfb_ms, raw.error, injected,
    )  # fmt: skip


def _glanced(
    request: RawRequest,
    redactor: Redactor,
    at: datetime,
    status: int | None,
    body: bytes | None,
    events: list[bytes] | None,
    undecodable: bool,
    total_ms: float | None,
    ttfb_ms: float | None,
    error: str | None,
    injected: tuple[str, ...],
) -> Glance:
    """`glance` of an exchange given in parts: `status` None when no answer came; `events` a stream's data."""
    route, model = _said(request)
    streaming = route.streaming if route is not None else None
    return Glance(
        at=at,
        method=request.method,
        url=url(request, redactor),
        provider=route.provider.value if route is not None else None,
        operation=route.operation.value if route is not None else None,
        vendor=route.vendor if route is not None else None,
        model=shown_model(redactor, model) if model is not None else None,
        status=status,
        streaming=bool(streaming) if streaming is not None else events is not None,
        latency_ms=round(total_ms, 3) if total_ms is not None else None,
        ttfb_ms=round(ttfb_ms, 3) if ttfb_ms is not None else None,
        usage=_usage(chat_codec(route) if route is not None else None, status, body, events)
        if not undecodable
        else None,
        error=error,
        injected=injected,
    )


def _said(request: RawRequest) -> tuple[Route | None, str | None]:
    """The API `request` speaks, detected as the conversion detects it, and the model it asks for."""
    route = detected(request)
    parsed = None
    if route is not None:
        try:
            parsed = orjson.loads(request.body) if request.body and not request.undecodable else None
        except orjson.JSONDecodeError:
            parsed = None
        route = with_body(route, parsed if isinstance(parsed, dict) else None)
    model = route.model if route is not None and route.model else None
    if model is None and isinstance(parsed, dict) and isinstance(parsed.get("model"), str):
        model = parsed["model"]
    return route, model


def _usage(codec: ChatCodec | None, status: int | None, body: bytes | None, events: list[bytes] | None) -> Usage | None:
    """What the answer says it used, read by its API's `codec`; None for an exchange that is not a chat API's
    (no codec), or says nothing."""
    if codec is None or status is None:
        return None
    try:
        if events is None and status < 400:  # no need to decode it all
            if codec.read_usage is not None:
                return codec.read_usage(orjson.loads(body or b""))
            if codec.read_answer is not None:
                answer = codec.read_answer(orjson.loads(body or b""), None)
                return answer.usage if not answer.error else None
        return decode_answer(codec, status, body or b"", events).usage
    except (LlmproxyError, ValueError):  # not what its API sends: no usage to show (JSONDecodeError is one)
        return None


def _as_events(exchange: RawExchange) -> RawExchange:
    """A stream a stage sent whole (unpaced) cut into its wire events, as a recorded stream is kept."""
    response = exchange.response
    if response is None or response.events is not None or response.body is None:
        return exchange
    content_type = header(response.headers, "content-type") or ""
    if not StreamCapture.streams(content_type):
        return exchange
    capture = StreamCapture(content_type, header(response.headers, "content-encoding"), 0.0)
    capture.feed(response.body, 0.0)
    return with_events(exchange, capture)


class _Live:
    """The upstream's answer as it passes, a stream's pieces kept for the journal: they are cut into events when
    the entry is read (`_upstream`), not on the event loop."""

    __slots__ = ("incoming", "pieces", "tap")

    def __init__(self, tap: JournalTap, incoming: Incoming, pieces: RawPieces | None) -> None:
        self.tap = tap
        self.incoming = incoming
        self.pieces = pieces

    def chunk(self, data: bytes, at: float) -> bytes:
        if self.pieces is not None:
            self.pieces.feed(data, at)
        return data

    async def end(self, exchange: RawExchange) -> None:
        if self.pieces is not None:
            exchange = with_pieces(exchange, self.pieces)
        self.tap._keep(self.incoming, exchange)
