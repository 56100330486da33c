"""Properties of the Chat Completions codec over any Completion and any input.

Wider than the cross-codec properties: missing ids, models and created, refusals, every stop reason,
in-band errors, and arguments that are not JSON objects.
"""

import contextlib
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmproxy.errors import ParseError
from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.openai_chat import CHAT

text = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)
key = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(key, inner, max_size=3),
    max_leaves=8,
)
tool_call = st.builds(
    ToolCall,
    id=text,
    name=text,
    arguments=st.dictionaries(key, json_value, max_size=3),
    invalid_arguments=st.none() | text | st.sampled_from(["", "[1]", '{"a": 1}', "null", '{"a":']),
)
usage = st.builds(
    Usage,
    input_tokens=st.integers(0, 10**7),
    output_tokens=st.integers(0, 10**7),
    cache_read_tokens=st.integers(0, 10**6),
    cache_write_tokens=st.integers(0, 10**6),
    reasoning_tokens=st.integers(0, 10**6),
    estimated=st.booleans(),
)
error = st.builds(ProviderError, kind=st.sampled_from(ErrorKind), message=text, type=st.none() | text)
completions = st.builds(
    Completion,
    id=st.none() | text,
    model=st.none() | text,
    created=st.none() | st.integers(0, 2**40),
    text=text,
    tool_calls=st.lists(tool_call, max_size=3).map(tuple),
    stop_reason=st.none() | st.sampled_from(StopReason),
    reasoning=st.none() | text,
    reasoning_signature=st.none() | text,
    usage=st.none() | usage,
    error=st.none() | error,
)


@given(completion=completions)
def test_body_round_trip(completion: Completion) -> None:
    decoded = CHAT.decode_response(CHAT.encode_response(completion))
    if completion.error is None:
        assert decoded == CHAT.visible(completion)
    else:  # a failed completion has no 200 body: only its error is sent
        assert decoded == Completion(stop_reason=None, error=CHAT.visible(completion).error)


@given(completion=completions, delta_chars=st.integers(1, 30), cuts=st.lists(st.integers(0, 10**5), max_size=12))
def test_stream_round_trip_any_deltas_any_split(completion: Completion, delta_chars: int, cuts: list[int]) -> None:
    wire = b"".join(CHAT.encode_stream(completion, delta_chars=delta_chars))
    points = sorted({cut % (len(wire) + 1) for cut in cuts})
    pieces = [wire[a:b] for a, b in zip([0, *points], [*points, len(wire)], strict=True)]
    assert CHAT.decode_stream(pieces) == CHAT.visible(completion)


@given(completion=completions)
def test_visible_is_idempotent(completion: Completion) -> None:
    assert CHAT.visible(CHAT.visible(completion)) == CHAT.visible(completion)


@given(raw=st.binary(max_size=300))
def test_arbitrary_bytes_raise_only_parse_error(raw: bytes) -> None:
    for decode in (CHAT.decode_request, CHAT.decode_response, lambda b: CHAT.decode_stream([b])):
        with contextlib.suppress(ParseError):
            decode(raw)


@given(value=json_value)
def test_arbitrary_json_raises_only_parse_error(value: Any) -> None:
    raw = json.dumps(value).encode()
    for decode in (CHAT.decode_request, CHAT.decode_response, lambda b: CHAT.decode_stream([b"data: " + b + b"\n\n"])):
        with contextlib.suppress(ParseError):
            decode(raw)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for name, item in value.items():
            found += _paths(item, (*path, name))
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


REQUEST = {
    "model": "gpt-x",
    "stream": True,
    "max_tokens": 5,
    "reasoning_effort": "low",
    "messages": [
        {"role": "system", "content": "s"},
        {"role": "user", "content": [{"type": "text", "text": "t"}, {"type": "image_url", "image_url": {"url": "u"}}]},
        {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "d", "format": "wav"}}]},
        {"role": "user", "content": [{"type": "file", "file": {"file_data": "data:a/b;base64,x"}}]},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "f", "arguments": "{}"},
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "n", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "r"},
        {"role": "function", "name": "f", "content": "r"},
    ],
    "tools": [
        {"type": "function", "function": {"name": "n", "parameters": {}}},
        {"type": "custom", "custom": {"name": "p"}},
    ],
    "functions": [{"name": "f"}],
}
STREAM = Completion(
    text="hi",
    tool_calls=(ToolCall("c", "n", {"a": 1}),),
    usage=Usage(3, 4, 1, 1, 1),
    stop_reason=StopReason.REFUSAL,
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), new=json_value)
def test_mutated_requests_bodies_and_chunks_raise_only_parse_error(data: st.DataObject, new: Any) -> None:
    """A valid request, body or chunk with one part replaced by other JSON: decoded, or ParseError."""
    request = _replace(REQUEST, data.draw(st.sampled_from(_paths(REQUEST))), new)
    body = json.loads(CHAT.encode_response(STREAM))
    body = _replace(body, data.draw(st.sampled_from(_paths(body))), new)
    events = CHAT.encode_stream(STREAM, delta_chars=1)
    index = data.draw(st.integers(0, len(events) - 2))
    chunk = json.loads(events[index][len(b"data: ") :])
    chunk = _replace(chunk, data.draw(st.sampled_from(_paths(chunk))), new)
    events[index] = b"data: " + json.dumps(chunk).encode() + b"\n\n"
    for decode, raw in (
        (CHAT.decode_request, json.dumps(request).encode()),
        (CHAT.decode_response, json.dumps(body).encode()),
        (lambda b: CHAT.decode_stream(events), b""),
    ):
        with contextlib.suppress(ParseError):
            decode(raw)
