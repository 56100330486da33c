"""SSE framing: the decoder follows the spec the SDK decoders implement, for any split of the bytes."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.errors import ParseError
from llmproxy.framing.sse import SseDecoder, SseEvent, decode_all, encode_comment, encode_event


def feed_split(data: bytes, cuts: list[int]) -> list[SseEvent]:
    decoder = SseDecoder()
    events: list[SseEvent] = []
    last = 0
    for cut in sorted(set(cuts)):
        events += decoder.feed(data[last:cut])
        last = cut
    events += decoder.feed(data[last:])
    decoder.close()
    return events


def test_event_and_multiline_data() -> None:
    events = decode_all([b'event: message_start\ndata: {"a":\ndata: 1}\n\n'])
    assert events == [SseEvent(data='{"a":\n1}', event="message_start")]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(newline: bytes) -> None:
    raw = newline.join([b"event: x", b"data: one", b"", b"data: two", b"", b""])
    assert decode_all([raw]) == [SseEvent("one", "x"), SseEvent("two")]


def test_crlf_split_between_feeds_is_one_line_end() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\n\r") == [SseEvent("a")]
    assert decoder.feed(b"\ndata: b\r\n\r\n") == [SseEvent("b")]


def test_comments_unknown_fields_and_colon_spacing() -> None:
    raw = b": keep-alive\n\nfoo: bar\ndata:nospace\ndata:  two spaces\nretry: 250\nid: 7\n\n"
    assert decode_all([raw]) == [SseEvent(data="nospace\n two spaces", id="7", retry=250)]


def test_field_without_colon_and_empty_data() -> None:
    assert decode_all([b"data\n\n"]) == [SseEvent("")]


def test_byte_order_mark_is_dropped_once() -> None:
    assert decode_all([b"\xef\xbb\xbfdata: a\n\n"]) == [SseEvent("a")]


def test_event_cut_off_by_the_end_is_dropped_and_reported() -> None:
    """As the spec and the SDK decoders do: no client ever saw an unterminated event."""
    decoder = SseDecoder()
    assert decoder.feed(b"data: one\n\ndata: cut") == [SseEvent("one")]
    assert decoder.close() is True
    decoder = SseDecoder()
    assert decoder.feed(b"data: whole-line\n") == []
    assert decoder.close() is True
    decoder = SseDecoder()
    assert decoder.feed(b"data: done\n\n") == [SseEvent("done")]
    assert decoder.close() is False


def test_cut_inside_a_utf8_character_is_not_an_error() -> None:
    decoder = SseDecoder()
    assert decoder.feed("data: a\n\ndata: ü".encode()[:-1]) == [SseEvent("a")]
    assert decoder.close() is True


def test_blank_lines_alone_make_no_events() -> None:
    assert decode_all([b"\n\n\r\n: comment\n\n"]) == []


def test_invalid_utf8_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="not UTF-8"):
        decode_all([b"data: \xff\xfe\n\n"])


def test_utf8_character_split_across_feeds() -> None:
    raw = "data: ü🚀\n\n".encode()
    assert feed_split(raw, [7, 9]) == [SseEvent("ü🚀")]


def test_encoder_writes_event_then_data_lines() -> None:
    assert encode_event('{"x":1}', "ping") == b'event: ping\ndata: {"x":1}\n\n'
    assert encode_event("a\nb") == b"data: a\ndata: b\n\n"
    assert encode_comment() == b":\n\n"
    assert encode_comment("hi") == b": hi\n\n"


field_text = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=30)
events = st.lists(
    st.tuples(field_text, st.none() | st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1)),
    max_size=8,
)


@given(events, st.lists(st.integers(min_value=0, max_value=2000), max_size=12))
def test_encode_then_decode_under_any_split(pairs: list[tuple[str, str | None]], cuts: list[int]) -> None:
    """Round trip: whatever the split, the decoder returns exactly the encoded events."""
    raw = b"".join(encode_event(data, event) for data, event in pairs)
    assert feed_split(raw, cuts) == [SseEvent(data, event) for data, event in pairs]


@given(st.binary(max_size=300), st.lists(st.integers(min_value=0, max_value=300), max_size=8))
def test_any_bytes_any_split_same_events_or_parse_error(raw: bytes, cuts: list[int]) -> None:
    """Split invariance on arbitrary input; the only failure allowed is llmproxy's ParseError."""
    try:
        whole = decode_all([raw])
    except ParseError:
        with pytest.raises(ParseError):
            feed_split(raw, cuts)
        return
    assert feed_split(raw, cuts) == whole
