"""AWS event-stream framing: botocore reads what we write, any split decodes the same, and the CRCs catch
every corrupted byte."""

import struct
import zlib
from uuid import UUID

import pytest
from botocore.eventstream import EventStreamBuffer
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.errors import ParseError
from llmproxy.framing.eventstream import (
    EventMessage,
    EventStreamDecoder,
    Header,
    HeaderType,
    decode_all,
    encode_event,
    encode_message,
)
from tests.providers.strategies import splits

BOUNDS = {
    HeaderType.BYTE: 2**7,
    HeaderType.SHORT: 2**15,
    HeaderType.INTEGER: 2**31,
    HeaderType.LONG: 2**63,
    HeaderType.TIMESTAMP: 2**63,
}


@st.composite
def headers(draw: st.DrawFn) -> tuple[Header, ...]:
    names = draw(st.lists(st.text(max_size=8).filter(lambda n: len(n.encode()) < 256), max_size=6, unique=True))
    made: list[Header] = []
    for name in names:
        kind = draw(st.sampled_from(HeaderType))
        value: bool | int | bytes | str | UUID
        if kind in (HeaderType.TRUE, HeaderType.FALSE):
            value = kind is HeaderType.TRUE
        elif kind in BOUNDS:
            value = draw(st.integers(-BOUNDS[kind], BOUNDS[kind] - 1))
        elif kind is HeaderType.BYTES:
            value = draw(st.binary(max_size=20))
        elif kind is HeaderType.STRING:
            value = draw(st.text(max_size=20))
        else:
            value = UUID(bytes=draw(st.binary(min_size=16, max_size=16)))
        made.append(Header(name, value, kind))
    return tuple(made)


messages = st.builds(EventMessage, headers(), st.binary(max_size=60))


def wire(items: list[EventMessage]) -> bytes:
    return b"".join(encode_message(m) for m in items)


@given(items=st.lists(messages, max_size=4), cuts=st.lists(st.integers(0, 10**6), max_size=12))
def test_any_split_decodes_to_the_messages_encoded(items: list[EventMessage], cuts: list[int]) -> None:
    assert decode_all(splits(wire(items), cuts)) == items


@given(message=messages)
def test_botocore_reads_what_we_write(message: EventMessage) -> None:
    buffer = EventStreamBuffer()
    buffer.add_data(encode_message(message))
    (parsed,) = list(buffer)
    expected = {h.name: h.value.bytes if isinstance(h.value, UUID) else h.value for h in message.headers}
    assert (parsed.headers, parsed.payload) == (expected, message.payload)


@given(items=st.lists(messages, min_size=1, max_size=3), data=st.data())
def test_any_corrupted_byte_is_a_parse_error(items: list[EventMessage], data: st.DataObject) -> None:
    """CRC-32 catches every error burst up to 32 bits: a changed byte never yields a different valid parse."""
    raw = bytearray(wire(items))
    index = data.draw(st.integers(0, len(raw) - 1))
    raw[index] ^= data.draw(st.integers(1, 255))
    with pytest.raises(ParseError, match="event-stream message at byte"):
        decode_all([bytes(raw)])


@given(raw=st.binary(max_size=200), cuts=st.lists(st.integers(0, 300), max_size=4))
def test_arbitrary_bytes_raise_only_parse_error(raw: bytes, cuts: list[int]) -> None:
    decoder = EventStreamDecoder()
    try:
        for chunk in splits(raw, cuts):
            decoder.feed(chunk)
    except ParseError:
        return
    assert isinstance(decoder.close(), bool)


@given(message=messages, cut=st.integers(1, 10**6))
def test_close_reports_a_message_cut_off(message: EventMessage, cut: int) -> None:
    raw = encode_message(message)
    decoder = EventStreamDecoder()
    assert decoder.feed(raw + raw[: cut % len(raw)]) == [message]
    assert decoder.close() is (cut % len(raw) != 0)


def test_string_event_layout_matches_the_reference_encoder() -> None:
    """The simplest encoding botocore accepts (docs/providers.md#aws-event-stream-framing), byte for byte."""
    payload = b'{"role":"assistant"}'
    h = b"".join(
        bytes([len(n)]) + n + b"\x07" + struct.pack(">H", len(v)) + v
        for n, v in [(b":event-type", b"messageStart"), (b":message-type", b"event")]
    )
    pre = struct.pack(">II", 16 + len(h) + len(payload), len(h))
    pre += struct.pack(">I", zlib.crc32(pre))
    msg = pre + h + payload
    msg += struct.pack(">I", zlib.crc32(msg))
    assert encode_event({":event-type": "messageStart", ":message-type": "event"}, payload) == msg
    (decoded,) = decode_all([msg])
    assert decoded.string(":event-type") == "messageStart"
    assert decoded.header(":message-type") == "event"
    assert decoded.string("absent") is None


def _framed(headers: bytes, payload: bytes = b"", total: int | None = None) -> bytes:
    pre = struct.pack(">II", 16 + len(headers) + len(payload) if total is None else total, len(headers))
    pre += struct.pack(">I", zlib.crc32(pre))
    body = pre + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (_framed(b"")[:8] + b"\0\0\0\0" + _framed(b"")[12:], "prelude CRC is 0x00000000, computed 0x05c248eb"),
        (_framed(b"", b"x")[:-1] + b"!", "message CRC is"),
        (_framed(b"", total=15), "total length 15 is too short for 0 bytes of headers"),
        (_framed(b"\x01a\x0c"), "header 'a' has unknown value type 12"),
        (_framed(b"\x01a\x00\x01a\x01"), "header 'a' appears twice"),
        (_framed(b"\x01a\x07\x00\x05ab"), "header 'a''s value needs 5 bytes, only 2 left"),
        (_framed(b"\x02\xff\xfe\x00"), "a header name is not UTF-8"),
        (_framed(b"\x01a\x04\x00"), "INTEGER value needs 4 bytes"),
    ],
)
def test_precise_errors(raw: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=f"event-stream message at byte 0: .*{message}"):
        decode_all([raw])


def test_error_offsets_count_from_the_start_of_the_stream() -> None:
    good = encode_event({"a": "b"})
    with pytest.raises(ParseError, match=f"at byte {len(good)}: message CRC"):
        decode_all([good, good[:-1], b"\0"])


def test_lengths_over_botocore_limits_are_refused() -> None:
    pre = struct.pack(">II", 16 + 200_000, 200_000)
    with pytest.raises(ParseError, match="headers length 200000 is over 131072"):
        decode_all([pre + struct.pack(">I", zlib.crc32(pre))])
    pre = struct.pack(">II", 16 + 25 * 2**20, 0)
    with pytest.raises(ParseError, match="payload length is over"):
        decode_all([pre + struct.pack(">I", zlib.crc32(pre))])


@pytest.mark.parametrize(
    "header",
    [
        Header("n", 1),  # a string header holding an int
        Header("n", 128, HeaderType.BYTE),
        Header("n", True, HeaderType.FALSE),
        Header("n", "x", HeaderType.UUID),
        Header("n", "x" * 70_000),
        Header("n" * 256, "x"),
    ],
)
def test_encoder_refuses_values_that_do_not_fit(header: Header) -> None:
    with pytest.raises(ValueError, match="event-stream header"):
        encode_message(EventMessage((header,)))
