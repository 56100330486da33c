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
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from llmproxy.cassette.convert import to_exchange
from llmproxy.cassette.model import Exchange
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.stream_capture import StreamCapture
from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Events, Headers, Reply, ReplySource, header
from llmproxy.chain.stage import Observer, ResponseHead, Tap
from llmproxy.chain.taps.record import replied, with_events
from llmproxy.journal import Journal, Source
from llmproxy.model.exchange import RawExchange, RawRequest

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

    def reply(self, incoming: Incoming, reply: Reply) -> Reply:
        source = SOURCES.get(reply.source)
        if source is None:  # a WebSocket the relay takes over: its messages are journalled one by one
            return reply
        body = reply.body
        if body is not None and not reply.shared:
            body = bytes(memoryview(body))
        injected = tuple(incoming.injected) if incoming.injected else ()
        raw = incoming.raw
        kept = (raw, reply.status, reply.headers, body, reply.events, reply.reason, reply.drop, time.time(), injected)
        redactor = self.redactor
        captured = lambda: _replied(kept)  # noqa: E731 (one cell each: the least a request pays)
        convert = lambda seq: to_exchange(_replied(kept), seq, redactor)  # noqa: E731
        self.journal.add(source, incoming.test_id, raw, convert, captured)
        return reply

    def open(self, incoming: Incoming, head: ResponseHead | None) -> Observer | None:
        if head is not None and head.status == 101:  # a protocol switch (WebSocket): not an HTTP exchange
            return None
        capture = None
        if head is not None and head.streamed:
            capture = StreamCapture(head.header("content-type") or "", head.header("content-encoding"), head.started)
        return _Live(self, incoming, capture)

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
        redactor = self.redactor

        def captured() -> RawExchange:
            return _as_events(raw)

        def convert(seq: int) -> Exchange:
            return to_exchange(captured(), seq, redactor)

        self.journal.add(Source.LIVE, incoming.test_id, incoming.raw, convert, captured)


type _Kept = tuple[RawRequest, int, Headers, bytes | None, Events | None, str, bool, float, tuple["Injected", ...]]
"""A stage's reply as the tap keeps it: the request; the reply's status, headers, body, events, reason and
whether the connection was dropped; when (`time.time()`); the faults put in."""


def _replied(kept: _Kept) -> RawExchange:
    request, status, headers, body, events, reason, drop, at, injected = kept
    reply = Reply(status, headers, body, events, reason=reason, drop=drop)
    return _as_events(replied(request, reply, datetime.fromtimestamp(at, UTC), injected))


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
    """The upstream's answer as it passes, its events noted for the journal."""

    __slots__ = ("capture", "incoming", "tap")

    def __init__(self, tap: JournalTap, incoming: Incoming, capture: StreamCapture | None) -> None:
        self.tap = tap
        self.incoming = incoming
        self.capture = capture

    def chunk(self, data: bytes, at: float) -> bytes:
        if self.capture is not None:
            self.capture.feed(data, at)
        return data

    async def end(self, exchange: RawExchange) -> None:
        if self.capture is not None:
            exchange = with_events(exchange, self.capture)
        self.tap._keep(self.incoming, exchange)
