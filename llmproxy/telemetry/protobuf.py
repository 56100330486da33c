"""The protocol-buffers wire format, as far as the OTLP messages need it (protobuf.dev/programming-guides/encoding):
varints, 64-bit fixed numbers and doubles, and length-delimited fields (strings, bytes, nested messages, packed
repeated numbers). Writing only: llmproxy sends OTLP and never reads it.

Hand-written rather than the generated classes of `opentelemetry-proto`: a span is a few dozen fields whose
bytes mostly repeat from call to call (`llmproxy.telemetry.wire` keeps those), and building message objects
to serialise them cost several times what joining bytes does (scripts/bench/telemetry.py --encoders).
"""

import struct
from typing import Final

VARINT: Final = 0
FIXED64: Final = 1
LENGTH: Final = 2

_DOUBLE: Final = struct.Struct("<d")
_FIXED64: Final = struct.Struct("<Q")
_SMALL: Final = tuple(bytes((n,)) for n in range(128))  # a varint below 128 is its one byte


def varint(value: int) -> bytes:
    """A non-negative int, or a negative int64 as its two's complement (ten bytes), as protobuf writes them."""
    if 0 <= value < 128:
        return _SMALL[value]
    if 0 < value < 16384:  # two bytes: a span's length, most attributes'
        return bytes((value & 0x7F | 0x80, value >> 7))
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value > 127:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def length_delimited(field: int, payload: bytes) -> bytes:
    """A string's UTF-8, bytes, or a nested message's encoding, as field `field`."""
    return tag(field, LENGTH) + varint(len(payload)) + payload


def string(field: int, text: str) -> bytes:
    return length_delimited(field, text.encode())


def unsigned(field: int, value: int) -> bytes:
    """An int64, uint64, bool or enum field."""
    return tag(field, VARINT) + varint(value)


def fixed64(field: int, value: int) -> bytes:
    return tag(field, FIXED64) + _FIXED64.pack(value)


def double(field: int, value: float) -> bytes:
    return tag(field, FIXED64) + _DOUBLE.pack(value)


def packed_fixed64(field: int, values: list[int]) -> bytes:
    return length_delimited(field, struct.pack(f"<{len(values)}Q", *values))


def packed_double(field: int, values: tuple[float, ...]) -> bytes:
    return length_delimited(field, struct.pack(f"<{len(values)}d", *values))
