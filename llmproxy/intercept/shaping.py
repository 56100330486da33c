"""What happens to an answer on its way to the client: its stream cut, a corrupt event slipped in, delays
before the first byte and between events, a body dribbled in small pieces.

These work on timed events, `((seconds after the request, bytes), …)`, as a replayed or mocked reply carries
them, and on the pieces of a live upstream stream as they pass (`LiveShaper`). A cut stream ends with the
connection dropped, as a failing server's would: the client sees no clean end.
"""

from dataclasses import dataclass

from llmproxy.cassette.stream_capture import Framing
from llmproxy.framing.eventstream import EventStreamDecoder, encode_message
from llmproxy.intercept.events import EventSplitter

type Events = tuple[tuple[float, bytes], ...]


@dataclass(frozen=True, slots=True)
class Shaping:
    """What a profile does to answers it lets through. `cut`: keep a fraction (float) or a number (int) of the
    events, then drop the connection; `malformed_after`: a broken copy of the event after this many; delays
    in seconds; `chunk`: dribble bodies `chunk` bytes at a time, `chunk_delay` apart."""

    cut: float | int | None = None
    malformed_after: int | None = None
    first_byte: float = 0.0
    per_event: float = 0.0
    chunk: int | None = None
    chunk_delay: float = 0.0

    @property
    def delays(self) -> bool:
        return bool(self.first_byte or self.per_event or self.chunk)

    def events(self, events: Events, framing: Framing) -> tuple[Events, bool]:
        """The events as the client gets them, and whether the connection is dropped after them."""
        shaped = list(events)
        cut = False
        if self.cut is not None:
            keep = self.cut if isinstance(self.cut, int) else int(len(shaped) * self.cut)
            cut = keep < len(shaped)
            shaped = shaped[:keep]
        if self.malformed_after is not None and shaped:
            at = min(self.malformed_after, len(shaped))
            template = shaped[at - 1] if at else shaped[0]
            shaped.insert(at, (template[0], broken_event(template[1], framing)))
        if self.delays:
            shaped = list(self._delayed(shaped))
        return tuple(shaped), cut

    def body(self, body: bytes) -> Events:
        """A whole body as timed events: after the first-byte delay, in pieces when dribbled."""
        return tuple(self._delayed([(0.0, body)]))

    def _delayed(self, events: list[tuple[float, bytes]]) -> list[tuple[float, bytes]]:
        timed: list[tuple[float, bytes]] = []
        shift = self.first_byte
        last = 0.0
        for index, (at, data) in enumerate(events):
            if index:
                shift += self.per_event
            start = max(at + shift, last)
            pieces = _pieces(data, self.chunk) if self.chunk else [data]
            for number, piece in enumerate(pieces):
                last = start + number * self.chunk_delay
                timed.append((last, piece))
            shift = max(shift, last - at)
        return timed


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)] or [data]


def broken_event(event: bytes, framing: Framing) -> bytes:
    """A copy of `event` whose JSON is cut in half, in the same framing (and, for SSE, under the same `event:`
    name, so a client that reads only the events it knows still reads this one)."""
    if framing is Framing.SSE:
        lines = event.rstrip(b"\r\n").split(b"\n")
        kept = [line for line in lines if not line.startswith(b"data:")]
        data = b"\n".join(line[5:].lstrip() for line in lines if line.startswith(b"data:"))
        return b"\n".join([*kept, b"data: " + _half(data)]) + b"\n\n"
    if framing is Framing.LINES:
        return _half(event.rstrip(b"\r\n")) + b"\n"
    if framing is Framing.EVENTSTREAM:
        messages = EventStreamDecoder().feed(event)
        if messages:
            message = messages[0]
            return encode_message(type(message)(message.headers, _half(message.payload)))
    return _half(event)


def _half(data: bytes) -> bytes:
    """JSON that cannot parse: the first half of `data` (an unterminated value), never empty."""
    return data[: max(1, len(data) // 2)] if len(data) > 1 else b'{"llmproxy": "malformed'


class LiveShaper:
    """Cuts and corrupts a live stream as its pieces pass, by whole events (`EventSplitter`). A fraction of a
    live stream cannot be known before it ends, so a fraction cuts it just before its last event: each event
    is held back until the next one arrives, and the last one never goes out. Delays cannot be added here:
    the proxy hands a live stream on synchronously, piece by piece."""

    def __init__(self, shaping: Shaping, framing: Framing) -> None:
        self.shaping = shaping
        self.framing = framing
        self.splitter = EventSplitter(framing)
        self.sent = 0  # whole events passed on
        self.done = False  # cut: nothing more goes out
        self.corrupted = False
        cut = shaping.cut
        self.keep = cut if isinstance(cut, int) else 0 if cut == 0 else None
        self.hold_last = isinstance(cut, float) and cut > 0
        self.held: bytes | None = None

    def chunk(self, data: bytes) -> tuple[bytes, bool]:
        """What of `data` goes on (b"" marks the stream's end), and whether the connection must be dropped
        once it has."""
        if self.done:
            return b"", False
        out = bytearray()
        for event in self.splitter.feed(data):
            if self.hold_last:
                previous, self.held = self.held, event
                if previous is None:
                    continue
                event = previous
            if self._send(event, out):
                return bytes(out), True
        if not data:
            self.done = True
            if self.hold_last and self.held is not None:
                return bytes(out), True
            out += self.splitter.rest()
        return bytes(out), False

    def _send(self, event: bytes, out: bytearray) -> bool:
        """Add `event` to `out`; True when the cut comes before it."""
        if self.keep is not None and self.sent >= self.keep:
            self.done = True
            return True
        after = self.shaping.malformed_after
        if after == 0 and not self.corrupted:  # a broken copy before the first event, as for a stored stream
            out += broken_event(event, self.framing)
            self.corrupted = True
        out += event
        self.sent += 1
        if after is not None and not self.corrupted and self.sent >= after:
            out += broken_event(event, self.framing)
            self.corrupted = True
        return False
