"""Whole wire events out of a live stream's pieces, by the stream's framing (as `StreamCapture` finds them:
a blank line for SSE, a newline for NDJSON, the length prefix for an AWS event-stream; an unknown framing
has no events, so each piece counts as one). Only what is complete comes out; the rest waits for more."""

from llmproxy.cassette.stream_capture import Framing

_SSE_ENDS = (b"\n\n", b"\r\n\r\n", b"\r\r")


class EventSplitter:
    __slots__ = ("_buffer", "_framing")

    def __init__(self, framing: Framing) -> None:
        self._framing = framing
        self._buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        if self._framing is Framing.CHUNKS:
            return [data] if data else []
        buffer = self._buffer + data
        events: list[bytes] = []
        start = 0
        while (end := self._end(buffer, start)) > start:
            events.append(buffer[start:end])
            start = end
        self._buffer = buffer[start:]
        return events

    def rest(self) -> bytes:
        """What arrived after the last whole event (a stream cut mid-event)."""
        rest, self._buffer = self._buffer, b""
        return rest

    def _end(self, buffer: bytes, start: int) -> int:
        """Where the event starting at `start` ends, or `start` when it is not complete yet."""
        if self._framing is Framing.EVENTSTREAM:
            if len(buffer) - start < 4:
                return start
            total = int.from_bytes(buffer[start : start + 4])
            return start + total if total >= 16 and len(buffer) - start >= total else start
        if self._framing is Framing.LINES:
            found = buffer.find(b"\n", start)
            return found + 1 if found >= 0 else start
        ends = [found + len(end) for end in _SSE_ENDS if (found := buffer.find(end, start)) >= 0]
        return min(ends) if ends else start
