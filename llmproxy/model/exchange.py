"""One exchange as it crossed the wire, raw and unredacted: what a door hands the core (a request to answer,
an exchange to record), whichever door it came through.

Bodies are content-decoded (gzip, br, stacked encodings… undone); the original encoding is kept so the
cassette can note it. A body (or a stream) that could not be decoded comes as it was on the wire, with
`undecodable` saying why: the cassette then stores it marked as such, and `cassette check` fails on it. A
streamed response carries its events, each one complete wire event with its arrival time, or, as the recorder
hands it over, the pieces as they arrived (`RawPieces`), which the cassette writer cuts into those events. An
exchange made of WebSocket messages (`RawExchange.websocket`) has the connection's upgrade request with the
message that asked as its body, and the upgrade's answer with the messages that answered as its events.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class RawRequest:
    method: str
    scheme: str
    host: str
    port: int
    path: str  # includes the query string
    http_version: str
    headers: tuple[tuple[str, str], ...]  # in wire order, duplicates kept
    body: bytes  # content-decoded
    content_encoding: str | None  # the original encoding, if the body was encoded on the wire
    undecodable: str | None = None  # why `body` is still encoded


@dataclass(frozen=True, slots=True)
class RawEvent:
    t_ms: float  # offset from the request start
    data: bytes  # one complete wire event: an SSE event with its blank line, an NDJSON line, an event-stream message
    binary: bool = False  # a binary WebSocket message (a text message, or any other event, is not)

    def __reduce__(self) -> tuple[type["RawEvent"], tuple[float, bytes, bool]]:
        """Pickled as its values: a stream's events cross to the writer process by the hundred, and the
        generic dataclass pickling (`fields()` per event) costs several times more."""
        return RawEvent, (self.t_ms, self.data, self.binary)


@dataclass(slots=True)
class RawPieces:
    """A streamed answer as it arrived, not yet cut into events: each piece and its time (`time.time()`), its
    media type and content encoding, and `started`, the request's start on the same clock. The record tap keeps a
    stream so, one append a piece on the proxy's event loop, and the cassette writer, in a process of its own,
    cuts it (`cassette.stream_capture.cut`): into the same events, with the same times, as cutting it as it
    passed would have given."""

    content_type: str
    content_encoding: str | None
    started: float
    data: list[bytes]
    times: list[float]

    def feed(self, piece: bytes, at: float) -> None:
        if piece:
            self.data.append(piece)
            self.times.append(at)


@dataclass(frozen=True, slots=True)
class RawResponse:
    status: int
    reason: str
    http_version: str
    headers: tuple[tuple[str, str], ...]
    body: bytes | None  # content-decoded; None when streamed
    events: tuple[RawEvent, ...] | None  # when streamed
    content_encoding: str | None
    undecodable: str | None = None  # why `body` or `events` are still encoded
    pieces: RawPieces | None = None  # a stream not cut into `events` yet (then both `body` and `events` are None)


@dataclass(frozen=True, slots=True)
class RawExchange:
    request: RawRequest
    response: RawResponse | None  # None when the upstream failed before answering
    error: str | None  # upstream or connection failure ("connection refused", "client disconnected", …)
    started_at: datetime  # UTC
    ttfb_ms: float | None
    total_ms: float | None
    notes: tuple[str, ...] = ()  # what the recorder noticed, e.g. `StreamCapture.warning`; kept in the cassette
    websocket: int | None = None  # the WebSocket connection it was on: the same number, the same connection
    injected: tuple[dict[str, Any], ...] = ()  # faults llmproxy put into it on purpose (`Injected.record()`)


def wire_size(exchange: RawExchange) -> int:
    """About how many bytes an exchange holds (its bodies and events), for bounding what waits for the writer."""
    response = exchange.response
    size = 1024 + len(exchange.request.body)
    if response is not None:
        size += len(response.body or b"") + sum(len(event.data) for event in response.events or ())
        if response.pieces is not None:
            size += sum(map(len, response.pieces.data))
    return size
