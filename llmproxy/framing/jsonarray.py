"""A streamed JSON array (`[{…},\\r\\n{…}]`), split into its elements' bytes as they complete.

Google's streaming methods send this when the client does not ask for server-sent events (no `?alt=sse`).
The decoder tracks only nesting and strings, so any split of the input gives the same elements; it does
not validate them (each is parsed on its own). An element cut off by the end of the stream is dropped.
"""

from llmproxy.errors import ParseError

_WHITESPACE = frozenset(b" \t\r\n")
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
_QUOTE, _BACKSLASH, _COMMA = ord('"'), ord("\\"), ord(",")


class JsonArrayDecoder:
    """Feed bytes as they arrive; get each complete element of the top-level array back."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._depth = 0  # 1 inside the top-level array
        self._in_string = False
        self._escape = False
        self._start: int | None = None  # where the current element began in the buffer
        self._scalar = False  # the current element is a string, number or literal (ends at "," or "]")
        self._closed = False

    def feed(self, chunk: bytes) -> list[bytes]:
        elements: list[bytes] = []
        scanned = len(self._buffer)
        self._buffer += chunk
        for index in range(scanned, len(self._buffer)):
            element = self._byte(self._buffer[index], index)
            if element is not None:
                elements.append(element)
        if self._start is None:
            self._buffer.clear()
        elif self._start:
            del self._buffer[: self._start]
            self._start = 0
        return elements

    def _byte(self, byte: int, index: int) -> bytes | None:
        if self._in_string:
            if self._escape:
                self._escape = False
            elif byte == _BACKSLASH:
                self._escape = True
            elif byte == _QUOTE:
                self._in_string = False
            return None
        if byte in _WHITESPACE:
            return None
        if self._closed:
            raise ParseError("streamed JSON array: data after the closing bracket")
        if self._depth == 0:
            if byte != ord("["):
                raise ParseError(f"streamed JSON array: expected '[', got {chr(byte)!r}")
            self._depth = 1
            return None
        if self._depth == 1 and (self._start is None or self._scalar):
            return self._top_level(byte, index)
        if byte == _QUOTE:
            self._in_string = True
        elif byte in _OPEN:
            self._depth += 1
        elif byte in _CLOSE:
            self._depth -= 1
            if self._depth == 1:
                return self._take(index + 1)
        return None

    def _top_level(self, byte: int, index: int) -> bytes | None:
        """Between elements, or inside a scalar element, of the top-level array."""
        if byte in (_COMMA, ord("]")):
            element = self._take(index) if self._start is not None else None
            if byte == ord("]"):
                self._depth, self._closed = 0, True
            return element
        if self._start is None:
            self._start, self._scalar = index, byte not in _OPEN
            if byte in _OPEN:
                self._depth += 1
        if byte == _QUOTE:
            self._in_string = True
        return None

    def _take(self, end: int) -> bytes:
        assert self._start is not None
        element = bytes(self._buffer[self._start : end]).strip()
        self._start, self._scalar = None, False
        return element
