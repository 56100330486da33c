"""AWS event-stream (``application/vnd.amazon.eventstream``), decoded incrementally and encoded exactly as
botocore parses it (docs/providers.md#aws-event-stream-framing).

A message is ``total_length:u32 headers_length:u32 prelude_crc:u32 headers payload message_crc:u32``, all
big-endian; the prelude CRC covers the first 8 bytes and the message CRC every byte before it (CRC-32, IEEE).
A header is ``name_length:u8 name value_type:u8 value``, with the ten value types botocore knows. The decoder
keeps partial messages between feeds, so any split of the bytes gives the same messages, and checks the
prelude CRC as soon as the prelude has arrived, so a corrupt length is reported rather than waited for. A
message cut off by the end of the stream is dropped (botocore never yields it) and `close` reports it.
"""

import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from uuid import UUID

from llmproxy.errors import ParseError

MEDIA_TYPE = "application/vnd.amazon.eventstream"
PRELUDE_LENGTH = 12
MAX_HEADERS_LENGTH = 128 * 1024  # botocore's limits
MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024
_OVERHEAD = PRELUDE_LENGTH + 4  # prelude and message CRC


class HeaderType(IntEnum):
    TRUE = 0
    FALSE = 1
    BYTE = 2
    SHORT = 3
    INTEGER = 4
    LONG = 5
    BYTES = 6
    STRING = 7
    TIMESTAMP = 8  # milliseconds since the epoch, as an int64
    UUID = 9


type HeaderValue = bool | int | bytes | str | UUID

_INTEGERS = {HeaderType.BYTE: ">b", HeaderType.SHORT: ">h", HeaderType.INTEGER: ">i", HeaderType.LONG: ">q"}
_INTEGERS[HeaderType.TIMESTAMP] = ">q"


@dataclass(frozen=True, slots=True)
class Header:
    """One header with its wire type, so a decoded message encodes back to the same bytes."""

    name: str
    value: HeaderValue
    type: HeaderType = HeaderType.STRING


@dataclass(frozen=True, slots=True)
class EventMessage:
    headers: tuple[Header, ...] = ()
    payload: bytes = b""

    def header(self, name: str) -> HeaderValue | None:
        return next((h.value for h in self.headers if h.name == name), None)

    def string(self, name: str) -> str | None:
        """A header's value if it is a string header (the only type Bedrock's own headers use)."""
        return next((h.value for h in self.headers if h.name == name and isinstance(h.value, str)), None)


# -- encoding ------------------------------------------------------------------------------------------


def encode_message(message: EventMessage) -> bytes:
    """One message on the wire. Values that do not fit their type raise ValueError (a caller's bug)."""
    headers = b"".join(_encode_header(header) for header in message.headers)
    if len(headers) > MAX_HEADERS_LENGTH or len(message.payload) > MAX_PAYLOAD_LENGTH:
        raise ValueError("event-stream message: headers or payload over botocore's limits")
    prelude = struct.pack(">II", _OVERHEAD + len(headers) + len(message.payload), len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + message.payload
    return body + struct.pack(">I", zlib.crc32(body))


def encode_event(headers: dict[str, str], payload: bytes = b"") -> bytes:
    """A message whose headers are all strings, in the given order (what Bedrock sends)."""
    return encode_message(EventMessage(tuple(Header(name, value) for name, value in headers.items()), payload))


def _encode_header(header: Header) -> bytes:
    name = header.name.encode()
    if len(name) > 255:
        raise ValueError(f"event-stream header name over 255 bytes: {header.name[:40]!r}")
    kind, value = header.type, header.value
    head = bytes([len(name)]) + name + bytes([kind])
    if kind in (HeaderType.TRUE, HeaderType.FALSE):
        if value is not (kind is HeaderType.TRUE):
            raise ValueError(f"event-stream header {header.name!r}: {kind.name} holds {value!r}")
        return head
    if kind in _INTEGERS:
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"event-stream header {header.name!r}: {kind.name} holds {value!r}")
        try:
            return head + struct.pack(_INTEGERS[kind], value)
        except struct.error:
            raise ValueError(f"event-stream header {header.name!r}: {value} does not fit {kind.name}") from None
    if kind is HeaderType.UUID:
        if not isinstance(value, UUID):
            raise ValueError(f"event-stream header {header.name!r}: UUID holds {value!r}")
        return head + value.bytes
    if kind is HeaderType.STRING and isinstance(value, str):
        data = value.encode()
    elif kind is HeaderType.BYTES and isinstance(value, bytes):
        data = value
    else:
        raise ValueError(f"event-stream header {header.name!r}: {kind.name} holds {value!r}")
    if len(data) > 0xFFFF:
        raise ValueError(f"event-stream header {header.name!r}: value over 65535 bytes")
    return head + struct.pack(">H", len(data)) + data


# -- decoding ------------------------------------------------------------------------------------------


class EventStreamDecoder:
    """Feed bytes as they arrive; get complete, CRC-checked messages back."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._offset = 0  # stream offset of the buffer's first byte, for error messages

    def feed(self, chunk: bytes) -> list[EventMessage]:
        self._buffer += chunk
        messages: list[EventMessage] = []
        buffer = self._buffer
        start = 0
        while len(buffer) - start >= PRELUDE_LENGTH:
            total = _prelude(buffer, start, self._offset + start)
            if len(buffer) - start < total:
                break
            messages.append(_message(memoryview(buffer)[start : start + total], self._offset + start))
            start += total
        del buffer[:start]
        self._offset += start
        return messages

    def close(self) -> bool:
        """End of stream. Returns True when a message was cut off (its bytes are discarded)."""
        cut = bool(self._buffer)
        self._offset += len(self._buffer)
        self._buffer.clear()
        return cut


def _prelude(buffer: bytearray, start: int, at: int) -> int:
    """The total length of the message starting at `start`, after checking the prelude."""
    total, headers_length, crc = struct.unpack_from(">III", buffer, start)
    actual = zlib.crc32(buffer[start : start + 8])
    if crc != actual:
        raise ParseError(f"event-stream message at byte {at}: prelude CRC is {crc:#010x}, computed {actual:#010x}")
    if headers_length > MAX_HEADERS_LENGTH:
        raise ParseError(f"event-stream message at byte {at}: headers length {headers_length} is over 131072")
    if total < _OVERHEAD + headers_length:
        raise ParseError(
            f"event-stream message at byte {at}: total length {total} is too short for {headers_length} bytes "
            f"of headers (at least {_OVERHEAD + headers_length})"
        )
    if total - _OVERHEAD - headers_length > MAX_PAYLOAD_LENGTH:
        raise ParseError(f"event-stream message at byte {at}: payload length is over 25165824")
    return int(total)


def _message(data: memoryview, at: int) -> EventMessage:
    (crc,) = struct.unpack_from(">I", data, len(data) - 4)
    actual = zlib.crc32(data[:-4])
    if crc != actual:
        raise ParseError(f"event-stream message at byte {at}: message CRC is {crc:#010x}, computed {actual:#010x}")
    (headers_length,) = struct.unpack_from(">I", data, 4)
    headers_end = PRELUDE_LENGTH + headers_length
    headers = _HeaderReader(bytes(data[PRELUDE_LENGTH:headers_end]), at).headers()
    return EventMessage(headers, bytes(data[headers_end:-4]))


class _HeaderReader:
    def __init__(self, data: bytes, at: int) -> None:
        self.data = data
        self.position = 0
        self.at = at

    def fail(self, what: str) -> ParseError:
        return ParseError(f"event-stream message at byte {self.at}: headers byte {self.position}: {what}")

    def take(self, count: int, what: str) -> bytes:
        if self.position + count > len(self.data):
            left = len(self.data) - self.position
            raise self.fail(f"{what} needs {count} bytes, only {left} left in the headers")
        chunk = self.data[self.position : self.position + count]
        self.position += count
        return chunk

    def text(self, data: bytes, what: str) -> str:
        try:
            return data.decode()
        except UnicodeDecodeError:
            raise self.fail(f"{what} is not UTF-8") from None

    def headers(self) -> tuple[Header, ...]:
        headers: list[Header] = []
        seen: set[str] = set()
        while self.position < len(self.data):
            name = self.text(self.take(self.take(1, "a header name length")[0], "a header name"), "a header name")
            if name in seen:
                raise self.fail(f"header {name!r} appears twice")
            seen.add(name)
            headers.append(self.header(name))
        return tuple(headers)

    def header(self, name: str) -> Header:
        code = self.take(1, f"header {name!r}'s value type")[0]
        if code > HeaderType.UUID:
            raise self.fail(f"header {name!r} has unknown value type {code}")
        kind = HeaderType(code)
        value: HeaderValue
        if kind in (HeaderType.TRUE, HeaderType.FALSE):
            value = kind is HeaderType.TRUE
        elif kind in _INTEGERS:
            fmt = _INTEGERS[kind]
            (value,) = struct.unpack(fmt, self.take(struct.calcsize(fmt), f"header {name!r}'s {kind.name} value"))
        elif kind is HeaderType.UUID:
            value = UUID(bytes=self.take(16, f"header {name!r}'s UUID value"))
        else:
            (length,) = struct.unpack(">H", self.take(2, f"header {name!r}'s value length"))
            data = self.take(length, f"header {name!r}'s value")
            value = data if kind is HeaderType.BYTES else self.text(data, f"header {name!r}'s value")
        return Header(name, value, kind)


def decode_all(chunks: Iterable[bytes]) -> list[EventMessage]:
    """Every complete message of a stream."""
    decoder = EventStreamDecoder()
    messages = [message for chunk in chunks for message in decoder.feed(chunk)]
    decoder.close()
    return messages
