"""Server-sent events, decoded incrementally and encoded exactly as the official SDKs parse them.

Rules (docs/providers.md#server-sent-events): lines end at ``\\r\\n``, ``\\n`` or ``\\r``; a blank line ends an event;
fields are ``event``, ``data`` (several lines join with ``\\n``), ``id`` and ``retry``; one space after
the colon is dropped; lines starting with ``:`` are comments. The decoder keeps partial lines (and a
``\\r`` that may be the first half of ``\\r\\n``) between feeds, so any split of the bytes gives the same
events; an event cut off by the end of the stream is dropped. The encoder never writes ``id:`` lines:
after one, the Stainless SDKs emit an empty event on every later blank line and the OpenAI SDK crashes.
"""

from collections.abc import Iterable
from dataclasses import dataclass

import orjson

from llmproxy.errors import ParseError


@dataclass(frozen=True, slots=True)
class SseEvent:
    data: str
    event: str | None = None
    id: str | None = None
    retry: int | None = None


def encode_event(data: str, event: str | None = None) -> bytes:
    """One event on the wire: an optional ``event:`` line, ``data:`` line(s), a blank line."""
    head = f"event: {event}\n" if event is not None else ""
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"{head}{lines}\n".encode()


def encode_json_event(value: object, event: str | None = None) -> bytes:
    """An event whose data is a JSON value: JSON text has no raw newline, so it is one `data:` line as it is
    (the hot path of every streamed answer llmproxy writes)."""
    head = b"event: %s\n" % event.encode() if event is not None else b""
    return b"%sdata: %s\n\n" % (head, orjson.dumps(value))


def encode_comment(text: str = "") -> bytes:
    """A keep-alive comment block (safe for every SDK decoder as long as no ``id:`` was sent)."""
    return f": {text}\n\n".encode() if text else b":\n\n"


class SseDecoder:
    """Feed bytes as they arrive; get complete events back."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._skip_lf = False  # the previous feed ended in "\r": a leading "\n" belongs to it
        self._at_start = True
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None
        self._has_fields = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if not self._buffer and not self._skip_lf and not self._at_start and b"\r" not in chunk:
            return self._feed_lines(chunk)
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_lf = False
        self._buffer += chunk
        events: list[SseEvent] = []
        start = 0
        buffer = self._buffer
        length = len(buffer)
        while start < length:
            cr = buffer.find(b"\r", start)
            lf = buffer.find(b"\n", start)
            if cr == -1 and lf == -1:
                break
            end = lf if cr == -1 or (lf != -1 and lf < cr) else cr
            line = bytes(buffer[start:end])
            if buffer[end] == 0x0D:  # "\r": swallow a following "\n", or remember to
                if end + 1 < length:
                    start = end + 2 if buffer[end + 1] == 0x0A else end + 1
                else:
                    start = end + 1
                    self._skip_lf = True
            else:
                start = end + 1
            event = self._line(line)
            if event is not None:
                events.append(event)
        del self._buffer[:start]
        return events

    def _feed_lines(self, chunk: bytes) -> list[SseEvent]:
        """A chunk whose lines all end at "\n" (almost every stream's): cut at once, and its `data:` lines and
        blank lines, nearly all of a stream, read here without a call each (the audit decodes every recorded
        stream again, event by event)."""
        *lines, rest = chunk.split(b"\n")
        events: list[SseEvent] = []
        data = self._data
        for line in lines:
            if line.startswith(b"data: "):
                try:
                    data.append(line[6:].decode("utf-8"))
                except UnicodeDecodeError as exc:
                    raise ParseError(f"server-sent events: a line is not UTF-8: {exc}") from None
                self._has_fields = True
            elif not line:
                if self._has_fields:
                    events.append(self._take())
                    data = self._data
            else:
                self._line(line)  # other fields, comments: never an event's end
        self._buffer += rest
        return events

    def close(self) -> bool:
        """End of stream. An event not ended by a blank line is discarded, as the spec and the SDK decoders
        do: no client ever saw it. Returns True when something was discarded (the stream was cut)."""
        cut = bool(self._buffer) or self._has_fields
        self._buffer.clear()
        self._reset()
        return cut

    def _line(self, raw: bytes) -> SseEvent | None:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"server-sent events: a line is not UTF-8: {exc}") from None
        if self._at_start:
            self._at_start = False
            line = line.removeprefix("\ufeff")
        if not line:
            return self._take() if self._has_fields else None
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self._retry = int(value)
        else:
            return None  # unknown field: ignored, as the spec says
        self._has_fields = True
        return None

    def _take(self) -> SseEvent:
        event = SseEvent(data="\n".join(self._data), event=self._event, id=self._id, retry=self._retry)
        self._reset()
        return event

    def _reset(self) -> None:
        self._event = None
        self._data = []
        self._id = None
        self._retry = None
        self._has_fields = False


def decode_all(chunks: Iterable[bytes]) -> list[SseEvent]:
    """Every complete event of a stream."""
    decoder = SseDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    decoder.close()
    return events
