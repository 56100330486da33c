"""Properties of the Anthropic codec over arbitrary completions and arbitrary input."""

import contextlib
import copy
import itertools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from llmproxy.errors import ParseError
from llmproxy.framing.sse import decode_all, encode_event
from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.anthropic import MESSAGES

FIXTURES = Path(__file__).parents[2] / "fixtures" / "requests" / "anthropic"

# JSON text cannot hold lone surrogates, so neither can anything that travels as JSON.
TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT
JSON = st.recursive(
    JSON_SCALARS | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
COUNT = st.integers(0, 10**6)
USAGE = st.builds(
    Usage,
    input_tokens=COUNT,
    output_tokens=COUNT,
    cache_read_tokens=COUNT,
    cache_write_tokens=COUNT,
    reasoning_tokens=COUNT,
    estimated=st.booleans(),
)
CALL = st.builds(
    ToolCall,
    id=TEXT,
    name=TEXT,
    arguments=st.dictionaries(TEXT, JSON, max_size=3),
    invalid_arguments=st.none() | TEXT,
)
ERROR = st.builds(ProviderError, kind=st.sampled_from(ErrorKind), message=TEXT, type=st.none() | TEXT)
COMPLETION = st.builds(
    Completion,
    id=st.none() | TEXT,
    model=st.none() | TEXT,
    created=st.none() | st.integers(0, 2**40),
    text=TEXT,
    tool_calls=st.lists(CALL, max_size=3).map(tuple),
    stop_reason=st.none() | st.sampled_from(StopReason),
    reasoning=st.none() | TEXT,
    reasoning_signature=st.none() | TEXT,
    usage=st.none() | USAGE,
    error=st.none() | ERROR,
)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=300)
@given(completion=COMPLETION, delta_chars=st.integers(1, 50), cuts=st.lists(st.integers(0, 10**6), max_size=20))
def test_stream_round_trip_any_delta_size_any_split(completion: Completion, delta_chars: int, cuts: list[int]) -> None:
    wire = b"".join(MESSAGES.encode_stream(completion, delta_chars=delta_chars))
    assert MESSAGES.decode_stream(split(wire, cuts)) == MESSAGES.visible(completion)


@settings(max_examples=300)
@given(completion=COMPLETION.filter(lambda c: c.error is None))
def test_body_round_trip(completion: Completion) -> None:
    assert MESSAGES.decode_response(MESSAGES.encode_response(completion)) == MESSAGES.visible(completion)


@given(completion=COMPLETION)
def test_visible_is_idempotent(completion: Completion) -> None:
    visible = MESSAGES.visible(completion)
    assert MESSAGES.visible(visible) == visible


@given(completion=COMPLETION, model=TEXT)
def test_request_model_fills_a_missing_one(completion: Completion, model: str) -> None:
    body = orjson.loads(MESSAGES.encode_response(replace(completion, error=None), {"model": model}))
    events = decode_all(MESSAGES.encode_stream(completion, {"model": model}))
    assert body["model"] == orjson.loads(events[0].data)["message"]["model"] == (completion.model or model)


def _corrupt(data: st.DataObject, document: Any) -> None:
    """Drop one key of one object anywhere in `document`, or replace its value by arbitrary JSON."""
    target = data.draw(st.sampled_from([d for d in _objects(document) if d]))
    key = data.draw(st.sampled_from(sorted(target)))
    if data.draw(st.booleans()):
        del target[key]
    else:
        target[key] = data.draw(ANY_JSON)


def _objects(value: Any) -> list[dict[str, Any]]:
    """Every JSON object inside `value`, itself included."""
    if isinstance(value, list):
        return [inner for v in value for inner in _objects(v)]
    if not isinstance(value, dict):
        return []
    return [value, *(inner for v in value.values() for inner in _objects(v))]


def _only_parse_errors(decode: Callable[[Any], object], data: object) -> None:
    with contextlib.suppress(ParseError):
        decode(data)


@given(body=st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_parse_error(body: bytes) -> None:
    _only_parse_errors(MESSAGES.decode_request, body)
    _only_parse_errors(MESSAGES.decode_response, body)
    _only_parse_errors(MESSAGES.decode_stream, [body])
    assert isinstance(MESSAGES.decode_error(500, body), ProviderError)


ANY_JSON = st.recursive(
    JSON_SCALARS
    | st.sampled_from(["text", "tool_use", "thinking", "message", "image", "base64", "user", "tool_result"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "role",
                    "content",
                    "messages",
                    "system",
                    "tools",
                    "text",
                    "input",
                    "source",
                    "usage",
                    "index",
                    "delta",
                    "message",
                    "content_block",
                    "error",
                    "thinking",
                    "id",
                    "name",
                    "data",
                    "cache_control",
                    "max_tokens",
                    "stop_reason",
                    "partial_json",
                    "signature",
                    "tool_use_id",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)
EVENT_TYPES = st.sampled_from(
    ["message_start", "content_block_start", "content_block_delta", "message_delta", "error", "ping"]
)


@settings(max_examples=300)
@given(value=ANY_JSON)
def test_arbitrary_json_raises_only_parse_error(value: object) -> None:
    body = orjson.dumps(value)
    _only_parse_errors(MESSAGES.decode_request, body)
    _only_parse_errors(MESSAGES.decode_response, body)
    assert isinstance(MESSAGES.decode_error(400, body), ProviderError)


@settings(max_examples=300)
@given(events=st.lists(st.tuples(EVENT_TYPES, ANY_JSON), max_size=6))
def test_arbitrary_events_raise_only_parse_error(events: list[tuple[str, object]]) -> None:
    payloads = [{"type": name, **value} if isinstance(value, dict) else value for name, value in events]
    stream = b"".join(
        encode_event(orjson.dumps(p).decode(), name) for (name, _), p in zip(events, payloads, strict=True)
    )
    _only_parse_errors(MESSAGES.decode_stream, [stream])


@settings(max_examples=500)
@given(data=st.data(), completion=COMPLETION)
def test_corrupted_real_events_raise_only_parse_error(data: st.DataObject, completion: Completion) -> None:
    """Structure-aware fuzzing: a real stream with one value somewhere dropped or replaced by any JSON."""
    events = [orjson.loads(e.data) for e in decode_all(MESSAGES.encode_stream(completion, delta_chars=8))]
    _corrupt(data, events)
    stream = [encode_event(orjson.dumps(e).decode(), str(e.get("type"))) for e in events]
    _only_parse_errors(MESSAGES.decode_stream, stream)


@settings(max_examples=500)
@given(data=st.data(), completion=COMPLETION.filter(lambda c: c.error is None))
def test_corrupted_real_bodies_raise_only_parse_error(data: st.DataObject, completion: Completion) -> None:
    body = orjson.loads(MESSAGES.encode_response(completion))
    _corrupt(data, body)
    _only_parse_errors(MESSAGES.decode_response, orjson.dumps(body))


REQUESTS = [orjson.loads(path.read_bytes()) for path in sorted(FIXTURES.glob("*.json"))]


@settings(max_examples=500)
@given(data=st.data(), which=st.integers(0, len(REQUESTS) - 1))
def test_corrupted_real_requests_raise_only_parse_error(data: st.DataObject, which: int) -> None:
    request = copy.deepcopy(REQUESTS[which])
    _corrupt(data, request)
    _only_parse_errors(MESSAGES.decode_request, orjson.dumps(request))
