"""Properties every chat codec must have, whatever the provider.

* decoding what was encoded gives back what the wire can carry (`visible`), for bodies and for streams
  cut into any delta size and split at any byte;
* decoders given arbitrary bytes, or valid bodies with any part replaced by other JSON, raise nothing but
  llmproxy's own `ParseError`.
"""

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmproxy.errors import ParseError
from llmproxy.model import Completion, StopReason, ToolCall, Usage
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.registry import CHAT_CODECS
from tests.golden.cases import CASES

CODECS = pytest.mark.parametrize("codec", list(CHAT_CODECS.values()), ids=list(CHAT_CODECS))

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)
ident = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd"), max_codepoint=127), min_size=1, max_size=12)
json_scalar = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | text
json_value = st.recursive(
    json_scalar | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ident, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[ToolCall, ...]:
    count = draw(st.integers(0, 3))
    calls = []
    for index in range(count):
        invalid = draw(st.none() | st.sampled_from(['{"a": ', "not json", "[1, 2]", '{"x": 1']))
        arguments = {} if invalid else draw(st.dictionaries(ident, json_value, max_size=4))
        calls.append(ToolCall(f"call_{index}_{draw(ident)}", draw(ident), arguments, invalid))
    return tuple(calls)


@st.composite
def usages(draw: st.DrawFn) -> Usage:
    input_tokens = draw(st.integers(0, 10**6))
    cache_read = draw(st.integers(0, input_tokens))
    cache_write = draw(st.integers(0, input_tokens - cache_read))
    output = draw(st.integers(0, 10**5))
    return Usage(input_tokens, output, cache_read, cache_write, draw(st.integers(0, output)))


@st.composite
def completions(draw: st.DrawFn) -> Completion:
    reasoning = draw(st.none() | text)
    return Completion(
        id=f"id_{draw(ident)}",
        model=draw(ident),
        created=draw(st.integers(0, 2**31)),
        text=draw(text),
        tool_calls=draw(tool_calls()),
        stop_reason=draw(st.sampled_from(StopReason)),
        reasoning=reasoning,
        reasoning_signature=draw(st.none() | ident) if reasoning is not None else None,
        usage=draw(st.none() | usages()),
    )


def splits(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@CODECS
@given(completion=completions())
def test_body_round_trip(codec: ChatCodec, completion: Completion) -> None:
    assert codec.decode_response(codec.encode_response(completion)) == codec.visible(completion)


@CODECS
@given(completion=completions(), delta_chars=st.integers(1, 40), cuts=st.lists(st.integers(0, 10**6), max_size=10))
def test_stream_round_trip_any_deltas_any_split(
    codec: ChatCodec, completion: Completion, delta_chars: int, cuts: list[int]
) -> None:
    wire = b"".join(codec.encode_stream(completion, delta_chars=delta_chars))
    assert codec.decode_stream(splits(wire, cuts)) == codec.visible(completion)


@CODECS
@given(raw=st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_parse_error(codec: ChatCodec, raw: bytes) -> None:
    for decode in (codec.decode_request, codec.decode_response, lambda b: codec.decode_stream([b])):
        with contextlib.suppress(ParseError):
            decode(raw)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = value.copy()
    copy[path[0]] = _replace(value[path[0]], path[1:], new)
    return copy


GOLDEN_BODIES = [
    (codec, json.loads(codec.encode_response(case))) for codec in CHAT_CODECS.values() for case in CASES.values()
]


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_bodies_raise_only_parse_error(data: st.DataObject) -> None:
    """A real body with one part replaced by other JSON: decoded, or refused with ParseError, never a crash."""
    codec, body = data.draw(st.sampled_from(GOLDEN_BODIES))
    path = data.draw(st.sampled_from(_paths(body)))
    mutated = json.dumps(_replace(body, path, data.draw(json_value))).encode()
    with contextlib.suppress(ParseError):
        codec.decode_response(mutated)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_stream_events_raise_only_parse_error(data: st.DataObject) -> None:
    """A real stream with one event's JSON replaced: decoded, or refused with ParseError, never a crash."""
    codec = data.draw(st.sampled_from(list(CHAT_CODECS.values())))
    events = codec.encode_stream(data.draw(st.sampled_from(list(CASES.values()))))
    index = data.draw(st.integers(0, len(events) - 1))
    head, _, payload = events[index].partition(b"data: ")
    if payload.strip().startswith(b"{"):
        body = json.loads(payload)
        path = data.draw(st.sampled_from(_paths(body)))
        payload = json.dumps(_replace(body, path, data.draw(json_value))).encode() + b"\n\n"
    events = [*events[:index], head + b"data: " + payload, *events[index + 1 :]]
    with contextlib.suppress(ParseError):
        codec.decode_stream(events)
