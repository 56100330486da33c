"""Stream faults on stored events and on live pieces: where a stream is cut, what a corrupt event looks like
to each framing's parser, and when events go out."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.cassette.stream_capture import Framing
from llmproxy.framing.eventstream import EventStreamDecoder, encode_event
from llmproxy.framing.sse import SseDecoder
from llmproxy.intercept.shaping import LiveShaper, Shaping, broken_event

SSE = tuple(
    (i * 0.01, f"event: content_block_delta\ndata: {json.dumps({'type': 'content_block_delta', 'i': i})}\n\n".encode())
    for i in range(10)
)


def test_a_fraction_keeps_the_leading_events_and_drops_the_connection() -> None:
    events, cut = Shaping(cut=0.5).events(SSE, Framing.SSE)
    assert events == SSE[:5]
    assert cut


def test_a_count_keeps_that_many_and_a_longer_stream_is_not_cut() -> None:
    assert Shaping(cut=3).events(SSE, Framing.SSE) == (SSE[:3], True)
    assert Shaping(cut=20).events(SSE, Framing.SSE) == (SSE, False)


def test_a_malformed_event_is_the_event_before_it_with_its_json_cut() -> None:
    events, cut = Shaping(malformed_after=2).events(SSE, Framing.SSE)
    assert not cut
    assert len(events) == 11
    broken = events[2][1]
    decoded = SseDecoder().feed(broken)
    assert [event.event for event in decoded] == ["content_block_delta"]  # read by clients that pick events by name
    with pytest.raises(json.JSONDecodeError):
        json.loads(decoded[0].data)


def test_malformed_lines_and_event_stream_messages_stay_framed() -> None:
    line = broken_event(b'{"message": {"content": "hello"}, "done": false}\n', Framing.LINES)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    with pytest.raises(json.JSONDecodeError):
        json.loads(line)
    message = encode_event({":event-type": "chunk", ":message-type": "event"}, b'{"bytes": "eyJ0eXBlIjoi"}')
    (decoded,) = EventStreamDecoder().feed(broken_event(message, Framing.EVENTSTREAM))  # CRCs still hold
    assert decoded.string(":event-type") == "chunk"
    with pytest.raises(json.JSONDecodeError):
        json.loads(decoded.payload)


def test_latency_delays_the_first_byte_and_spaces_the_events() -> None:
    events, _ = Shaping(first_byte=0.5, per_event=0.1).events(SSE[:3], Framing.SSE)
    assert [round(at, 3) for at, _ in events] == [0.5, 0.61, 0.72]


def test_a_slow_body_is_dribbled_in_pieces() -> None:
    events = Shaping(chunk=4, chunk_delay=0.2).body(b"0123456789")
    assert events == ((0.0, b"0123"), (0.2, b"4567"), (0.4, b"89"))


def live(shaping: Shaping, pieces: list[bytes], framing: Framing = Framing.SSE) -> tuple[bytes, bool]:
    shaper = LiveShaper(shaping, framing)
    out = b""
    for piece in [*pieces, b""]:
        data, cut = shaper.chunk(piece)
        out += data
        if cut:
            return out, True
    return out, False


def splits(data: bytes) -> st.SearchStrategy[list[bytes]]:
    """`data` in pieces, as a stream arrives (never an empty one: that marks the end)."""
    return st.lists(st.integers(0, len(data)), max_size=8).map(
        lambda points: [
            piece
            for a, b in zip([0, *sorted(points)], [*sorted(points), len(data)], strict=True)
            if (piece := data[a:b])
        ]
    )


STREAM = b"".join(data for _, data in SSE)


@given(splits(STREAM))
def test_a_live_cut_after_n_events_is_the_same_however_the_bytes_arrive(pieces: list[bytes]) -> None:
    assert live(Shaping(cut=4), pieces) == (b"".join(data for _, data in SSE[:4]), True)


@given(splits(STREAM))
def test_a_live_fraction_cuts_just_before_the_last_event(pieces: list[bytes]) -> None:
    assert live(Shaping(cut=0.5), pieces) == (b"".join(data for _, data in SSE[:9]), True)


@given(splits(STREAM))
def test_a_live_malformed_event_goes_in_after_n_events(pieces: list[bytes]) -> None:
    expected = b"".join(data for _, data in Shaping(malformed_after=3).events(SSE, Framing.SSE)[0])
    assert live(Shaping(malformed_after=3), pieces) == (expected, False)


def test_a_live_stream_with_nothing_to_do_passes_unchanged_with_its_tail() -> None:
    assert live(Shaping(), [STREAM + b'data: {"cut']) == (STREAM + b'data: {"cut', False)
