"""NDJSON framing: one JSON value per line, the same values for any split of the bytes."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.errors import ParseError
from llmproxy.framing.ndjson import NdjsonDecoder, decode_all, encode_line
from tests.providers.strategies import json_values, splits


def test_one_value_per_line() -> None:
    raw = b'{"a":1}\n[2]\n"three"\n4\nnull\n'
    assert decode_all([raw]) == [{"a": 1}, [2], "three", 4, None]


def test_crlf_and_blank_lines_are_tolerated() -> None:
    assert decode_all([b'\r\n{"a":1}\r\n\n  \t\r\n{"b":2}\r\n']) == [{"a": 1}, {"b": 2}]


def test_values_arrive_as_their_line_ends() -> None:
    decoder = NdjsonDecoder()
    assert decoder.feed(b'{"done":') == []
    assert decoder.feed(b'false}\n{"do') == [{"done": False}]
    assert decoder.feed(b'ne":true}\n') == [{"done": True}]
    assert decoder.close() is False


def test_a_last_line_without_newline_is_a_cut_stream() -> None:
    decoder = NdjsonDecoder()
    assert decoder.feed(b'{"a":1}\n12') == [{"a": 1}]
    assert decoder.close() is True  # "12" may be the start of "123": dropped, like a cut SSE event
    assert decode_all([b'{"a":1}\n{"b":2}']) == [{"a": 1}]
    trailing_blank = NdjsonDecoder()
    trailing_blank.feed(b'{"a":1}\n \r')
    assert trailing_blank.close() is False


@pytest.mark.parametrize(
    ("raw", "line"),
    [(b'{"a":1}\n{"a":\n', 2), (b'\n\n{"a":1}\nnope\n', 4), (b"\xff\xfe\n", 1), (b'{"a":1}{"b":2}\n', 1)],
)
def test_malformed_json_names_its_line(raw: bytes, line: int) -> None:
    with pytest.raises(ParseError, match=rf"^ndjson: line {line}: not valid JSON"):
        decode_all([raw])


def test_encode_line_is_compact_json_and_a_newline() -> None:
    assert encode_line({"message": {"content": "a\nb"}, "done": False}) == (
        b'{"message":{"content":"a\\nb"},"done":false}\n'
    )


@given(values=st.lists(json_values, max_size=8), cuts=st.lists(st.integers(0, 10**6), max_size=20))
def test_any_split_gives_the_same_values(values: list[Any], cuts: list[int]) -> None:
    wire = b"".join(encode_line(value) for value in values)
    assert decode_all(splits(wire, cuts)) == values


@given(raw=st.binary(max_size=200), cuts=st.lists(st.integers(0, 10**6), max_size=10))
def test_arbitrary_bytes_raise_only_parse_error_and_split_does_not_matter(raw: bytes, cuts: list[int]) -> None:
    try:
        whole = decode_all([raw])
    except ParseError:
        with pytest.raises(ParseError):
            decode_all(splits(raw, cuts))
    else:
        assert decode_all(splits(raw, cuts)) == whole
