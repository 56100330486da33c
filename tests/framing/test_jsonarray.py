"""The streamed-JSON-array splitter: the same elements for any split of the bytes; cut elements dropped."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.errors import ParseError
from llmproxy.framing.jsonarray import JsonArrayDecoder
from tests.providers.strategies import json_values, splits


def decode(chunks: list[bytes]) -> list[bytes]:
    decoder = JsonArrayDecoder()
    return [element for chunk in chunks for element in decoder.feed(chunk)]


@given(values=st.lists(json_values, max_size=5), cuts=st.lists(st.integers(0, 10**6), max_size=20))
def test_any_split_gives_every_element(values: list[object], cuts: list[int]) -> None:
    wire = ("[" + ",\r\n".join(json.dumps(v, ensure_ascii=False) for v in values) + "]").encode()
    assert [json.loads(e) for e in decode(splits(wire, cuts))] == values


def test_objects_are_given_as_soon_as_they_close() -> None:
    decoder = JsonArrayDecoder()
    assert decoder.feed(b'[{"a": "}{,]"}') == [b'{"a": "}{,]"}']  # brackets inside strings do not count
    assert decoder.feed(b',\n{"b": [1, {"c": "\\""}]') == []
    assert decoder.feed(b"}\n]") == [b'{"b": [1, {"c": "\\""}]}']


def test_a_cut_element_is_dropped() -> None:
    assert decode([b'[{"a": 1},\r\n{"b": ']) == [b'{"a": 1}']


@pytest.mark.parametrize("wire", [b'{"a": 1}', b"data: {}", b'[{"a": 1}] {"b": 2}'])
def test_what_is_not_one_array_raises(wire: bytes) -> None:
    with pytest.raises(ParseError, match="streamed JSON array"):
        decode([wire])
