"""Newline-delimited JSON (``application/x-ndjson``), decoded incrementally and encoded as Ollama sends it.

Rules: each value is one line ended by ``\\n``; a ``\\r`` before it (CRLF) is JSON whitespace and
tolerated, as are blank lines, which are skipped. The decoder keeps a partial line between feeds, so any
split of the bytes gives the same values. A last line without its ``\\n`` is treated like the SSE decoder
treats an event without its blank line: the stream was cut, and the line is dropped (Ollama ends every
object with a newline, and the bytes of a cut line may still parse, e.g. ``12`` from ``123``); `close`
says whether that happened. Malformed JSON raises `ParseError` naming the line number.
"""

from collections.abc import Iterable
from typing import Any

import orjson

from llmproxy.errors import ParseError

MEDIA_TYPE = "application/x-ndjson"
_WHITESPACE = b" \t\r"  # JSON whitespace besides the newline


def encode_line(value: Any) -> bytes:
    """One value on the wire: compact JSON and a newline (JSON text never holds a raw newline)."""
    return orjson.dumps(value) + b"\n"


class NdjsonDecoder:
    """Feed bytes as they arrive; get the JSON values of complete lines back."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._line = 0  # lines ended so far, blank ones included

    def feed(self, chunk: bytes) -> list[Any]:
        self._buffer += chunk
        values: list[Any] = []
        start = 0
        while (end := self._buffer.find(b"\n", start)) != -1:
            self._line += 1
            line = bytes(self._buffer[start:end])
            start = end + 1
            if line.strip(_WHITESPACE):
                values.append(self._parse(line))
        del self._buffer[:start]
        return values

    def close(self) -> bool:
        """End of stream: a line without its newline is discarded. Returns True when one was (a cut stream)."""
        cut = bool(self._buffer.strip(_WHITESPACE))
        self._buffer.clear()
        return cut

    def _parse(self, line: bytes) -> Any:
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ParseError(f"ndjson: line {self._line}: not valid JSON: {exc}") from None


def decode_all(chunks: Iterable[bytes]) -> list[Any]:
    """Every complete value of a stream."""
    decoder = NdjsonDecoder()
    values = [value for chunk in chunks for value in decoder.feed(chunk)]
    decoder.close()
    return values
