import gzip
import itertools
import pickle
import zlib
from dataclasses import replace
from datetime import UTC, datetime

import brotli
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from llmproxy.cassette.stream_capture import StreamCapture, cut, with_events
from llmproxy.model.exchange import RawExchange, RawPieces, RawRequest, RawResponse
from tests.cassette.factory import eventstream_message

SSE = (
    b'event: message_start\ndata: {"type":"message_start"}\n\n'
    b"data: crlf\r\n\r\n"
    b"data: cr\r\r"
    b": comment\n\n"
    b'data: {"a":1}\n\n'
)
NDJSON = b'{"done":false}\n{"done":false,"x":"\\n"}\n{"done":true}\n'
EVENTSTREAM = eventstream_message(b'{"bytes":"aGk="}') + eventstream_message(b"{}", "messageStop")

ENCODERS = {
    None: lambda data: data,
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": lambda data: zstandard.ZstdCompressor().compress(data),
}


def capture(content_type: str, encoding: str | None, chunks: list[bytes]) -> StreamCapture:
    stream = StreamCapture(content_type, encoding, start=100.0)
    for index, chunk in enumerate(chunks):
        stream.feed(chunk, 100.0 + index / 1000)
    return stream


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def test_sse_events_are_cut_at_every_kind_of_blank_line() -> None:
    events = capture("text/event-stream; charset=utf-8", None, [SSE]).finish(101.0)
    assert [e.data for e in events] == [
        b'event: message_start\ndata: {"type":"message_start"}\n\n',
        b"data: crlf\r\n\r\n",
        b"data: cr\r\r",
        b": comment\n\n",
        b'data: {"a":1}\n\n',
    ]


def test_each_event_gets_the_time_of_the_chunk_that_completed_it() -> None:
    stream = StreamCapture("text/event-stream", None, start=10.0)
    stream.feed(b"data: 1\n\ndata: ", 10.002)
    stream.feed(b"2\n", 10.005)
    stream.feed(b"\n", 10.0075)
    assert [round(e.t_ms, 3) for e in stream.finish(11.0)] == [2.0, 7.5]


def test_a_cut_stream_keeps_its_last_partial_event_verbatim() -> None:
    stream = capture("text/event-stream", None, [b'data: 1\n\ndata: {"tru'])
    events = stream.finish(101.0)
    assert [e.data for e in events] == [b"data: 1\n\n", b'data: {"tru']
    assert stream.warning == "the stream ended with a cut event (11 bytes): kept as its last event"


@pytest.mark.parametrize(
    ("content_type", "data", "count"),
    [
        ("application/x-ndjson", NDJSON, 3),
        ("application/jsonl", NDJSON, 3),
        ("application/vnd.amazon.eventstream", EVENTSTREAM, 2),
    ],
)
def test_framed_types(content_type: str, data: bytes, count: int) -> None:
    events = capture(content_type, None, [data[:7], data[7:]]).finish(0)
    assert len(events) == count
    assert b"".join(e.data for e in events) == data


def test_a_broken_eventstream_keeps_the_rest_as_one_event() -> None:
    data = EVENTSTREAM + b"\x00\x00\x00\x01garbage" + EVENTSTREAM
    events = capture("application/vnd.amazon.eventstream", None, [data]).finish(0)
    assert [e.data for e in events] == [
        eventstream_message(b'{"bytes":"aGk="}'),
        eventstream_message(b"{}", "messageStop"),
        b"\x00\x00\x00\x01garbage" + EVENTSTREAM,
    ]


def test_unknown_types_give_one_event_per_chunk() -> None:
    assert [e.data for e in capture("text/plain", None, [b"a", b"", b"b"]).finish(0)] == [b"a", b"b"]
    assert not StreamCapture.streams("text/plain")
    assert StreamCapture.streams("Text/Event-Stream; charset=utf-8")


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_compressed_streams_are_decoded(encoding: str) -> None:
    compressed = ENCODERS[encoding](SSE)
    stream = capture("text/event-stream", encoding, [compressed[i : i + 3] for i in range(0, len(compressed), 3)])
    assert b"".join(e.data for e in stream.finish(0)) == SSE
    assert stream.warning is None


def test_raw_deflate_is_decoded() -> None:
    packer = zlib.compressobj(wbits=-15)
    data = packer.compress(NDJSON) + packer.flush()
    assert b"".join(e.data for e in capture("application/x-ndjson", "deflate", [data]).finish(0)) == NDJSON


def test_undecodable_bytes_fall_back_to_the_raw_chunks_with_a_warning() -> None:
    chunks = [gzip.compress(SSE)[:20], b"not gzip at all"]
    stream = capture("text/event-stream", "gzip", chunks)
    assert [e.data for e in stream.finish(0)] == chunks
    assert stream.warning is not None
    assert "content-encoding" in stream.warning


def test_an_unknown_encoding_is_recorded_as_it_arrived() -> None:
    stream = capture("text/event-stream", "compress", [b"\x1f\x9d", b"xx"])
    assert [e.data for e in stream.finish(0)] == [b"\x1f\x9d", b"xx"]
    assert stream.warning == "unsupported content-encoding 'compress': recorded the stream as it arrived, still encoded"


@settings(max_examples=60)
@given(
    kind=st.sampled_from(
        [
            ("text/event-stream", SSE),
            ("application/x-ndjson", NDJSON),
            ("application/vnd.amazon.eventstream", EVENTSTREAM),
        ]
    ),
    encoding=st.sampled_from(sorted(ENCODERS, key=str)),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
    tail=st.binary(max_size=40),
)
def test_same_events_for_any_split(kind: tuple[str, bytes], encoding: str | None, cuts: list[int], tail: bytes) -> None:
    content_type, data = kind
    data += tail  # arbitrary bytes, possibly ending in a cut event
    wire = ENCODERS[encoding](data)
    whole = capture(content_type, encoding, [wire]).finish(0)
    pieces = capture(content_type, encoding, split(wire, cuts)).finish(0)
    assert [e.data for e in pieces] == [e.data for e in whole]
    assert b"".join(e.data for e in whole) == data


@settings(max_examples=60)
@given(data=st.binary(max_size=300), cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=8))
def test_arbitrary_bytes_never_raise_and_nothing_is_lost(data: bytes, cuts: list[int]) -> None:
    for content_type in ("text/event-stream", "application/x-ndjson", "application/vnd.amazon.eventstream"):
        events = capture(content_type, None, split(data, cuts)).finish(0)
        assert b"".join(e.data for e in events) == data
    stream = capture("text/event-stream", "gzip", split(data, cuts))
    assert stream.finish(0) is not None


@settings(max_examples=60)
@given(
    kind=st.sampled_from([("text/event-stream", SSE), ("application/x-ndjson", NDJSON), ("text/plain", SSE)]),
    encoding=st.sampled_from([None, "gzip", "compress"]),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
    tail=st.binary(max_size=40),
)
def test_pieces_cut_by_the_writer_are_the_events_a_capture_cuts_as_they_pass(
    kind: tuple[str, bytes], encoding: str | None, cuts: list[int], tail: bytes
) -> None:
    """The recorder keeps a stream's pieces and the writer (in another process: pickled) cuts them: the same
    events, times, notes and undecodable mark as a capture fed each piece as it passed."""
    content_type, data = kind
    wire = gzip.compress(data + tail) if encoding == "gzip" else data + tail
    chunks = split(wire, cuts)
    request = RawRequest("POST", "https", "api.anthropic.com", 443, "/v1/messages", "HTTP/1.1", (), b"{}", None)
    answer = RawResponse(200, "OK", "HTTP/1.1", (("content-type", content_type),), None, None, encoding)
    exchange = RawExchange(request, answer, None, datetime.now(UTC), 1.0, 2.0)
    passing = capture(content_type, encoding, chunks)
    pieces = RawPieces(content_type, encoding, 100.0, [], [])
    for index, chunk in enumerate(chunks):
        pieces.feed(chunk, 100.0 + index / 1000)
    handed = replace(exchange, response=replace(answer, pieces=pieces))
    written, warning = cut(pickle.loads(pickle.dumps(handed)))
    assert written == with_events(exchange, passing)
    assert warning == passing.warning
    assert cut(written) == (written, None)  # an exchange without pieces is left as it is
