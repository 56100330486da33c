"""Cut a response stream into wire events as it passes through the proxy, with arrival times.

`feed` runs inside mitmproxy's synchronous stream tap, on the proxy's event loop, once per chunk: it must
stay cheap. It decodes the content encoding incrementally, appends to a buffer holding only the unfinished
tail, and finds event boundaries with `bytes.find` from where the last search stopped, so the cost is
linear in the stream. Boundaries by media type:

* ``text/event-stream``: a blank line (``\\n\\n``, ``\\r\\n\\r\\n`` or ``\\r\\r``; the match that ends first);
* ``application/x-ndjson``, ``application/jsonl``, ``application/json-seq`` …: a newline;
* ``application/vnd.amazon.eventstream``: the 4-byte big-endian total length that starts each message;
* anything else: each decoded chunk is one event.

The events depend only on the bytes, never on how they were split (except for unknown types, which have
no boundaries to find). An event gets the time of the chunk that completed it. Nothing here raises: bytes
that cannot be decoded make the capture fall back to the raw chunks as they arrived, with a `warning` and
the reason in `undecodable` (the cassette marks such events, and `cassette check` fails on them).

The record and journal taps do not cut on the event loop at all: they keep the pieces (`RawPieces`), and the
cassette writer, or the journal when an entry is read, cuts them (`cut`), feeding them here in order with their
times, which gives the same events.
"""

import time
from dataclasses import replace
from enum import Enum, auto

from llmproxy.cassette.decoding import Decoder, decoder_for
from llmproxy.model.exchange import RawEvent, RawExchange, RawPieces

_SSE_BOUNDARIES = (b"\n\n", b"\r\n\r\n", b"\r\r")
_LONGEST_BOUNDARY = 4
_EVENTSTREAM_MAX = 16 + 128 * 1024 + 24 * 1024 * 1024  # prelude + CRC, headers, payload limits


class Framing(Enum):
    SSE = auto()
    LINES = auto()
    EVENTSTREAM = auto()
    CHUNKS = auto()


_FRAMINGS = {
    "text/event-stream": Framing.SSE,
    "application/x-ndjson": Framing.LINES,
    "application/ndjson": Framing.LINES,
    "application/jsonl": Framing.LINES,
    "application/x-jsonlines": Framing.LINES,
    "application/jsonlines": Framing.LINES,
    "application/json-seq": Framing.LINES,
    "application/stream+json": Framing.LINES,  # Cohere's v1 chat streams
    "application/vnd.amazon.eventstream": Framing.EVENTSTREAM,
}


def framing(content_type: str) -> Framing:
    return _FRAMINGS.get(content_type.split(";", 1)[0].strip().lower(), Framing.CHUNKS)


class StreamCapture:
    __slots__ = (
        "_broken",
        "_buffer",
        "_decoder",
        "_events",
        "_framing",
        "_last_ms",
        "_raw",
        "_scan",
        "_start",
        "undecodable",
        "warning",
    )

    @staticmethod
    def streams(content_type: str) -> bool:
        """Whether a media type is one of the event streams this capture knows how to cut."""
        return framing(content_type) is not Framing.CHUNKS

    def __init__(self, content_type: str, content_encoding: str | None, start: float) -> None:
        """`start` is the request's start on the clock later passed as `now` (seconds)."""
        self._framing = framing(content_type)
        self._start = start
        self._buffer = bytearray()
        self._scan = 0  # where the next boundary search starts: the tail before it holds none
        self._broken = False  # an event-stream whose length prefixes stopped making sense
        self._events: list[RawEvent] = []
        self._last_ms = 0.0
        self.warning: str | None = None
        self.undecodable: str | None = None
        self._decoder: Decoder | None = None
        try:
            self._decoder = decoder_for(content_encoding)
        except ValueError as exc:
            self.warning = f"{exc}: recorded the stream as it arrived, still encoded"
            self.undecodable = str(exc)
        # the raw chunks of an encoded stream, to fall back on if decoding fails halfway
        self._raw: list[RawEvent] | None = [] if self._decoder is not None or self.warning else None

    def feed(self, chunk: bytes, now: float) -> None:
        if not chunk:
            return
        t_ms = (now - self._start) * 1000
        self._last_ms = t_ms
        if self._raw is not None:
            self._raw.append(RawEvent(t_ms, chunk))
            if self.warning is not None:
                return
        if self._decoder is not None:
            try:
                chunk = self._decoder.decode(chunk)
            except Exception as exc:  # any codec error: keep the raw chunks instead
                self._fail(exc)
                return
        self._cut(chunk, t_ms)

    def finish(self, now: float) -> tuple[RawEvent, ...]:
        """Every event; trailing bytes that end no event become a last one (a cut stream, kept verbatim)."""
        del now  # the tail belongs to the chunk that brought it
        if self._decoder is not None and self.warning is None:
            try:
                self._cut(self._decoder.flush(), self._last_ms)
            except Exception as exc:
                self._fail(exc)
        if self.warning is not None and self._raw is not None:
            return tuple(self._raw)
        if self._buffer:
            self._events.append(RawEvent(self._last_ms, bytes(self._buffer)))
            what = "bytes that are not event-stream messages" if self._broken else "a cut event"
            self.warning = f"the stream ended with {what} ({len(self._buffer)} bytes): kept as its last event"
            self._buffer.clear()
        return tuple(self._events)

    def _fail(self, exc: Exception) -> None:
        self.warning = f"could not decode the stream's content-encoding ({exc}): recorded it as it arrived"
        self.undecodable = f"content-encoding: {exc}"

    def _cut(self, data: bytes, t_ms: float) -> None:
        if not data:
            return
        if self._framing is Framing.CHUNKS:
            self._events.append(RawEvent(t_ms, data))
            return
        self._buffer += data
        start = self._cut_messages(t_ms) if self._framing is Framing.EVENTSTREAM else self._cut_delimited(t_ms)
        if start:
            del self._buffer[:start]

    def _cut_delimited(self, t_ms: float) -> int:
        buffer, start = self._buffer, 0
        boundaries = _SSE_BOUNDARIES if self._framing is Framing.SSE else (b"\n",)
        while (end := _first_end(buffer, boundaries, self._scan)) >= 0:
            self._events.append(RawEvent(t_ms, bytes(buffer[start:end])))
            start = self._scan = end
        self._scan = max(start, len(buffer) - _LONGEST_BOUNDARY + 1) - start
        return start

    def _cut_messages(self, t_ms: float) -> int:
        buffer, start = self._buffer, 0
        while not self._broken and len(buffer) - start >= 4:
            total = int.from_bytes(buffer[start : start + 4])
            if not 16 <= total <= _EVENTSTREAM_MAX:
                self._broken = True  # not event-stream framing after all: the rest becomes one final event
                break
            if len(buffer) - start < total:
                break
            self._events.append(RawEvent(t_ms, bytes(buffer[start : start + total])))
            start += total
        return start


def _first_end(buffer: bytearray, boundaries: tuple[bytes, ...], start: int) -> int:
    """The end of the boundary that ends first at or after `start`, or -1. Ending first (not starting first)
    keeps the answer independent of how much of the stream has arrived."""
    best = -1
    for boundary in boundaries:
        found = buffer.find(boundary, start)
        if found >= 0 and (best < 0 or found + len(boundary) < best):
            best = found + len(boundary)
    return best


def with_events(exchange: RawExchange, capture: StreamCapture) -> RawExchange:
    """The exchange with its streamed body as the wire events `capture` cut it into, and what `capture` warns
    of as a note (the events as they arrived, when they could not be decoded)."""
    if exchange.response is None:
        return exchange
    events = capture.finish(time.time())
    notes = (capture.warning,) if capture.warning else ()
    response = replace(exchange.response, body=None, events=events, undecodable=capture.undecodable, pieces=None)
    return replace(exchange, response=response, notes=(*exchange.notes, *notes))


def with_pieces(exchange: RawExchange, pieces: RawPieces) -> RawExchange:
    """The exchange with its streamed answer as the pieces that came, to be `cut` later, off the event loop."""
    if exchange.response is None:
        return exchange
    return replace(exchange, response=replace(exchange.response, body=None, pieces=pieces))


def cut(exchange: RawExchange) -> tuple[RawExchange, str | None]:
    """An exchange whose stream came as pieces (`RawPieces`) with the stream cut into its wire events, as a
    capture cuts it while it passes; and what the capture warns of (None for any other exchange)."""
    response = exchange.response
    pieces = response.pieces if response is not None else None
    if pieces is None:
        return exchange, None
    capture = StreamCapture(pieces.content_type, pieces.content_encoding, pieces.started)
    for data, at in zip(pieces.data, pieces.times, strict=True):
        capture.feed(data, at)
    return with_events(exchange, capture), capture.warning
