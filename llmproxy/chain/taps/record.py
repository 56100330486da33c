"""The record tap: what the upstream answers goes into the cassette, unchanged and unbuffered.

A stream passes to the client piece by piece as it arrives; the tap only keeps each piece and its time
(`RawPieces`), which the cassette writer cuts into wire events. A plain body is recorded whole when it ends.
Only LLM APIs, MCP servers' and A2A agents' traffic (told by its shape, `llmproxy.tool_protocols`) and the
hosts the scope adds are kept; what llmproxy answered itself (a replay hit, a mock) is not a new recording.
Everything here is observation: it never changes what the client receives, and what fails here the chain logs,
never letting it into the traffic (fail open).
"""

import logging
import threading
from collections import Counter
from collections.abc import Awaitable, Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from llmproxy.cassette.stream_capture import with_pieces
from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.chain.stage import Observer, ResponseHead, Tap
from llmproxy.chain.state import State
from llmproxy.model.exchange import RawEvent, RawExchange, RawPieces, RawRequest, RawResponse
from llmproxy.record_scope import RecordScope
from llmproxy.tool_protocols import protocol

if TYPE_CHECKING:
    from llmproxy.cassette.store import RecordSummary
    from llmproxy.intercept.faults import Injected

logger = logging.getLogger(__name__)


class Sink(Protocol):
    """Where finished exchanges go: a `CassetteWriter`, or the `WriterProcess` that runs one. `put` returns
    None once queued, or an awaitable while the queue is full (back-pressure: that flow waits, the event loop
    does not)."""

    def put(self, exchange: RawExchange) -> Awaitable[None] | None: ...

    def start(self) -> None: ...  # the run started cleanly: a rewrite may now replace the cassette

    def add(self, exchange: RawExchange) -> None: ...

    def close(self) -> "RecordSummary": ...


class RecordTap(Tap):
    name = "record"

    def __init__(self, scope: RecordScope, sink: Sink | None, destination: str = "") -> None:
        """`sink` None: nothing is recorded until `use` gives one."""
        self.scope = scope
        self.state: State[Sink | None] = State(sink)  # another cassette's writer, or none, while running
        self.destination = destination
        self.recorded: RecordSummary | None = None  # what the sink recorded, once closed
        self._missed: Counter[str] = Counter()  # what could not be recorded → how often
        self._lock = threading.Lock()

    def not_recorded(self, what: str) -> None:
        """Something the recording could not keep (a WebSocket it cannot read): said on stderr the first time,
        counted, and listed at the end of the run."""
        with self._lock:
            first = what not in self._missed
            self._missed[what] += 1
        if first:
            logger.warning("not recorded: %s", what)

    def use(self, sink: Sink | None) -> Sink | None:
        """Record into `sink` (None: nothing) from the next answer on; the sink it replaces, for the caller to
        close (answers still being recorded finish in it)."""
        return self.state.swap(sink)

    def open(self, incoming: Incoming, head: ResponseHead | None) -> Observer | None:
        sink = self.state.value
        if sink is None:  # not recording now
            return None
        if head is not None and head.status == 101:  # a protocol switch (WebSocket): not an HTTP exchange
            return None
        if not self._covers(incoming):
            return None
        pieces = None
        if head is not None and head.streamed:
            content_type = head.header("content-type") or ""
            pieces = RawPieces(content_type, head.header("content-encoding"), head.started, [], [])
        return _Recording(sink, pieces, incoming.injected)

    def reply(self, incoming: Incoming, reply: Reply) -> Reply:
        """A fault llmproxy answered in the upstream's place (an injected error, a quota, a dropped connection)
        is recorded as the client got it, marked injected: the recording shows the run as it happened."""
        sink = self.state.value
        if sink is not None and reply.source is ReplySource.FAULT and self._covers(incoming):
            sink.add(reply_exchange(incoming, reply))
        return reply

    def _covers(self, incoming: Incoming) -> bool:
        """An LLM API, a host the scope names, or a tool server's or agent's traffic by its shape."""
        if self.scope.covers(incoming.raw.host) or incoming.api is not None:  # its body unread
            return True
        return protocol(incoming.method, incoming.path, incoming.headers, incoming.json) is not None

    def explain(self) -> str:
        return f"to {self.destination}" if self.destination else "to a cassette"

    def start(self) -> None:
        """The run has started cleanly: a rewrite may now replace the cassette (before, closing leaves it as it
        was)."""
        if (sink := self.state.value) is not None:
            sink.start()

    def close(self) -> None:
        """The cassette written whole. Raises LlmproxyError (CassetteError) when it could not be."""
        if (sink := self.state.value) is not None:
            self.recorded = sink.close()

    def summary(self) -> list[str]:
        missed = [f"not recorded: {what}" + (f" ({n} times)" if n > 1 else "") for what, n in self._missed.items()]
        return missed if self.recorded is None else [str(self.recorded), *missed]


class _Recording:
    """One answer being recorded. A stream's pieces are only kept as they pass (`RawPieces`): cutting them into
    events, like everything else recording does with them, is the cassette writer's work, off the event loop."""

    __slots__ = ("injected", "pieces", "sink")

    def __init__(self, sink: Sink, pieces: RawPieces | None, injected: list["Injected"]) -> None:
        self.sink = sink
        self.pieces = pieces
        self.injected = injected  # the request's: faults put into the answer as it passed are added there

    def chunk(self, data: bytes, at: float) -> bytes:
        if self.pieces is not None:
            self.pieces.feed(data, at)
        return data

    async def end(self, exchange: RawExchange) -> None:
        if self.pieces is not None:
            exchange = with_pieces(exchange, self.pieces)
        if self.injected:
            exchange = replace(exchange, injected=tuple(fault.record() for fault in self.injected))
        queued = self.sink.put(exchange)
        if queued is not None:  # the queue is full: this flow waits for room
            await queued


def reply_exchange(incoming: Incoming, reply: Reply) -> RawExchange:
    """A reply of llmproxy's own as an exchange: as sent, at once, marked with the faults it carries."""
    return replied(incoming.raw, reply, datetime.now(UTC), incoming.injected)


def replied(request: RawRequest, reply: Reply, at: datetime, injected: "Iterable[Injected]") -> RawExchange:
    """`reply_exchange` of a request answered at `at` with these faults, for a tap that builds it later."""
    response = None
    if not reply.drop:
        events = tuple(RawEvent(at * 1000, data) for at, data in reply.events) if reply.events is not None else None
        body = None if events is not None else reply.data
        headers = reply.headers
        response = RawResponse(reply.status, reply.phrase, "HTTP/1.1", headers, body, events, None)
    error = "connection closed without an answer (injected)" if reply.drop else None
    return RawExchange(
        request,
        response,
        error,
        at,
        ttfb_ms=0.0,
        total_ms=0.0,
        injected=tuple(fault.record() for fault in injected),
    )
