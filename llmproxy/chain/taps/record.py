"""The record tap: what the upstream answers goes into the cassette, unchanged and unbuffered.

A stream passes to the client piece by piece as it arrives; the tap only notes each piece and its time for
`StreamCapture`, which cuts it into wire events. A plain body is recorded whole when it ends. Only LLM APIs
and the hosts the scope adds are kept; what llmproxy answered itself (a replay hit, a mock) is not a new
recording. Everything here is observation: it never changes what the client receives, and its own failures
are logged, not raised into the traffic (fail open).
"""

import logging
import threading
import time
from collections import Counter
from collections.abc import Awaitable
from dataclasses import replace
from typing import Protocol

from llmproxy.cassette.stream_capture import StreamCapture
from llmproxy.chain.incoming import Incoming
from llmproxy.chain.stage import Observer, ResponseHead, Tap
from llmproxy.chain.state import State
from llmproxy.errors import LlmproxyError
from llmproxy.model import Route
from llmproxy.model.exchange import RawExchange
from llmproxy.providers.routes import detect
from llmproxy.record_scope import RecordScope

logger = logging.getLogger(__name__)


class Sink(Protocol):
    """Where finished exchanges go: a `CassetteWriter`, or the `WriterProcess` that runs one. `put` returns
    None once queued, or an awaitable while the queue is full (back-pressure: that flow waits, the event loop
    does not)."""

    def put(self, exchange: RawExchange) -> Awaitable[None] | None: ...

    def start(self) -> None: ...  # the run started cleanly: a rewrite may now replace the cassette

    def add(self, exchange: RawExchange) -> None: ...

    def close(self) -> object: ...  # its summary, as a line


class RecordTap(Tap):
    name = "record"

    def __init__(self, scope: RecordScope, sink: Sink | None, destination: str = "") -> None:
        """`sink` None: nothing is recorded until `use` gives one."""
        self.scope = scope
        self.state: State[Sink | None] = State(sink)  # another cassette's writer, or none, while running
        self.destination = destination
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
        raw = incoming.raw
        if sink is None:  # not recording now
            return None
        if head is not None and head.status == 101:  # a protocol switch (WebSocket): not an HTTP exchange
            return None
        if not self.scope.covers(raw.host) and _detected(incoming) is None:
            return None
        capture = None
        if head is not None and head.streamed:
            content_type = head.header("content-type") or ""
            capture = StreamCapture(content_type, head.header("content-encoding"), head.started)
        return _Recording(sink, capture, _where(incoming))

    def explain(self) -> str:
        return f"to {self.destination}" if self.destination else "to a cassette"

    def start(self) -> None:
        if (sink := self.state.value) is not None:
            sink.start()

    def close(self, failures: list[LlmproxyError]) -> list[str]:
        missed = [f"not recorded: {what}" + (f" ({n} times)" if n > 1 else "") for what, n in self._missed.items()]
        written = []
        try:
            if (sink := self.state.value) is not None:
                written.append(str(sink.close()))
        except LlmproxyError as error:  # the cassette could not be written
            failures.append(error)
        return [*written, *missed]


class _Recording:
    __slots__ = ("capture", "sink", "where")

    def __init__(self, sink: Sink, capture: StreamCapture | None, where: str) -> None:
        self.sink = sink
        self.capture = capture
        self.where = where

    def chunk(self, data: bytes, at: float) -> bytes:
        if self.capture is not None:
            self.capture.feed(data, at)
        return data

    def end(self, exchange: RawExchange) -> Awaitable[None] | None:
        try:
            capture = self.capture
            if capture is not None and exchange.response is not None:
                events = capture.finish(time.time())
                notes = (capture.warning,) if capture.warning else ()
                for note in notes:
                    logger.warning("%s: %s", self.where, note)
                response = replace(exchange.response, body=None, events=events, undecodable=capture.undecodable)
                exchange = replace(exchange, response=response, notes=(*exchange.notes, *notes))
            return self.sink.put(exchange)
        except Exception:  # observing must never break the user's traffic
            logger.exception("could not record %s", self.where)
            return None


def _detected(incoming: Incoming) -> Route | None:
    raw = incoming.raw
    return detect(raw.host, raw.path, incoming.headers, method=raw.method, port=raw.port)


def _where(incoming: Incoming) -> str:
    """The request for a log line: without its query string, which may hold a key."""
    raw = incoming.raw
    return f"{raw.method} {raw.scheme}://{raw.host}{incoming.path}"
