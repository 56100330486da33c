"""Non-streaming Anthropic bodies: decoding what the API sends, and encoding what the SDKs expect."""

import json

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import (
    Completion,
    ErrorKind,
    OtherPart,
    ProviderError,
    ReasoningPart,
    StopReason,
    TextPart,
    ToolCall,
    Usage,
)
from llmproxy.providers.anthropic import MESSAGES
from llmproxy.providers.base import stable_id

API_BODY = {
    "id": "msg_01XYZ",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "thinking", "thinking": "First ", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "redacted-2"},
        {"type": "thinking", "thinking": "second.", "signature": "sig-3"},
        {"type": "text", "text": "Hello", "citations": None},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        {"type": "text", "text": " world"},
        {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 12,
        "output_tokens": 70,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 5,
        "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 0},
        "output_tokens_details": {"thinking_tokens": 40},
        "service_tier": "standard",
    },
}


def test_decode_api_body() -> None:
    completion = MESSAGES.decode_response(json.dumps(API_BODY).encode())
    assert completion == Completion(
        id="msg_01XYZ",
        model="claude-sonnet-4-5",
        text="Hello world",
        tool_calls=(ToolCall("toolu_01", "get_weather", {"city": "Paris"}),),
        stop_reason=StopReason.TOOL_USE,
        reasoning="First second.",
        reasoning_signature="sig-3",  # the last signature of several thinking blocks
        # neutral input includes cache reads and writes: 12 + 5 + 100
        usage=Usage(
            input_tokens=117, output_tokens=70, cache_read_tokens=5, cache_write_tokens=100, reasoning_tokens=40
        ),
        parts=(  # the server tool blocks have no neutral meaning: the answer's blocks are kept in order
            ReasoningPart("First ", "sig-1"),
            ReasoningPart(signature="redacted-2", redacted=True),
            ReasoningPart("second.", "sig-3"),
            TextPart("Hello"),
            OtherPart("server_tool_use", API_BODY["content"][4]),  # type: ignore[index]
            OtherPart("web_search_tool_result", API_BODY["content"][5]),  # type: ignore[index]
            TextPart(" world"),
            ToolCall("toolu_01", "get_weather", {"city": "Paris"}),
        ),
    )
    # sent again, the blocks come back as they were (a null `citations` says nothing and is left out)
    again = json.loads(MESSAGES.encode_response(completion))["content"]
    assert again == [{k: v for k, v in b.items() if v is not None} for b in API_BODY["content"]]  # type: ignore[union-attr]
    assert MESSAGES.decode_stream(MESSAGES.encode_stream(completion)) == completion


@pytest.mark.parametrize(
    ("wire", "reason"),
    [
        ("end_turn", StopReason.END_TURN),
        ("max_tokens", StopReason.MAX_TOKENS),
        ("stop_sequence", StopReason.STOP_SEQUENCE),
        ("tool_use", StopReason.TOOL_USE),
        ("pause_turn", StopReason.PAUSE_TURN),
        ("refusal", StopReason.REFUSAL),
        ("model_context_window_exceeded", StopReason.CONTEXT_WINDOW_EXCEEDED),
        ("something_new", StopReason.OTHER),
        (None, None),
    ],
)
def test_stop_reasons(wire: str | None, reason: StopReason | None) -> None:
    body: dict[str, object] = {
        "type": "message",
        "content": [],
        "stop_reason": wire,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    assert MESSAGES.decode_response(json.dumps(body).encode()).stop_reason is reason


def test_encode_exact_shape() -> None:
    completion = Completion(
        id="msg_1",
        model="claude-x",
        text="Hi",
        reasoning="think",
        reasoning_signature="sig",
        tool_calls=(ToolCall("toolu_1", "f", {"a": [1, 2]}),),
        stop_reason=StopReason.CONTEXT_WINDOW_EXCEEDED,
        usage=Usage(
            input_tokens=100, output_tokens=20, cache_read_tokens=30, cache_write_tokens=10, reasoning_tokens=5
        ),
    )
    assert json.loads(MESSAGES.encode_response(completion)) == {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [
            {"type": "thinking", "thinking": "think", "signature": "sig"},
            {"type": "text", "text": "Hi"},
            {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": [1, 2]}},
        ],
        "stop_reason": "model_context_window_exceeded",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 60,
            "cache_creation_input_tokens": 10,
            "cache_read_input_tokens": 30,
            "output_tokens": 20,
            "output_tokens_details": {"thinking_tokens": 5},
        },
    }


def test_encode_fills_identity_from_request_and_content() -> None:
    completion = Completion(text="x", usage=None)
    body = json.loads(MESSAGES.encode_response(completion, {"model": "asked-for"}))
    assert body["model"] == "asked-for"
    assert body["id"] == stable_id("msg_", None, "x", None, None, ())
    assert body["id"] == json.loads(MESSAGES.encode_response(completion))["id"]
    assert body["usage"] == {
        "input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 0,
    }
    assert "output_tokens_details" not in body["usage"]


def test_signature_without_reasoning_is_redacted_thinking() -> None:
    completion = Completion(id="m", model="x", reasoning_signature="opaque", usage=Usage())
    body = json.loads(MESSAGES.encode_response(completion))
    assert body["content"] == [{"type": "redacted_thinking", "data": "opaque"}]
    assert MESSAGES.decode_response(MESSAGES.encode_response(completion)) == MESSAGES.visible(completion)


@pytest.mark.parametrize(
    ("reason", "seen"),
    [(StopReason.CONTENT_FILTER, StopReason.REFUSAL), (StopReason.OTHER, StopReason.END_TURN), (None, None)],
)
def test_reasons_anthropic_lacks(reason: StopReason | None, seen: StopReason | None) -> None:
    completion = Completion(id="m", model="x", stop_reason=reason)
    assert MESSAGES.visible(completion).stop_reason is seen
    assert MESSAGES.decode_response(MESSAGES.encode_response(completion)).stop_reason is seen


def test_visible_drops_what_the_wire_lacks() -> None:
    completion = Completion(
        id="m",
        model="x",
        created=1_700_000_000,
        reasoning="",
        usage=Usage(input_tokens=3, cache_read_tokens=5, estimated=True),
        tool_calls=(ToolCall("t", "f", {"n": 1.0}),),
    )
    visible = MESSAGES.visible(completion)
    assert visible.created is None
    assert visible.reasoning is None
    assert visible.usage == Usage(input_tokens=5, cache_read_tokens=5)  # input never below its cached part
    assert MESSAGES.decode_response(MESSAGES.encode_response(completion)) == visible


@pytest.mark.parametrize(
    ("invalid", "arguments", "kept"),
    [
        ('{"path": "a.txt", "con', {}, '{"path": "a.txt", "con'),
        ("[1, 2]", {}, "[1, 2]"),
        ('{"a": 1}', {"a": 1}, None),  # text that is an object is just arguments
        ("", {}, None),
        ('{"INVALID_JSON": "{}"}', {"INVALID_JSON": "{}"}, None),  # wrapper of valid JSON: an argument
    ],
)
def test_invalid_arguments_use_the_documented_wrapper(
    invalid: str, arguments: dict[str, object], kept: str | None
) -> None:
    completion = Completion(id="m", model="x", tool_calls=(ToolCall("t", "f", invalid_arguments=invalid),))
    visible = MESSAGES.visible(completion)
    assert visible.tool_calls == (ToolCall("t", "f", arguments, kept),)
    body = json.loads(MESSAGES.encode_response(completion))
    assert body["content"][0]["input"] == (arguments if kept is None else {"INVALID_JSON": kept})
    assert MESSAGES.decode_response(MESSAGES.encode_response(completion)) == visible
    assert MESSAGES.decode_stream(MESSAGES.encode_stream(completion, delta_chars=3)) == visible


def test_error_completion_encodes_the_error_body() -> None:
    completion = Completion(error=ProviderError(ErrorKind.OVERLOADED, "Overloaded"))
    body = MESSAGES.encode_response(completion)
    assert json.loads(body) == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert MESSAGES.decode_response(body) == Completion(
        stop_reason=None, error=ProviderError(ErrorKind.OVERLOADED, "Overloaded", "overloaded_error")
    )


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b'{"type":"completion"}', "$.type"),
        (b'{"content":{}}', "$.content: expected a list"),
        (b'{"content":[{"type":"text","text":1}]}', "$.content[0].text"),
        (b'{"content":[{"type":"tool_use","id":"a","name":"b","input":[]}]}', "$.content[0].input"),
        (b'{"content":[],"usage":{"input_tokens":"3"}}', "$.usage.input_tokens"),
        (b'{"content":[],"usage":{"output_tokens_details":{"thinking_tokens":true}}}', "thinking_tokens"),
        (b'{"content":[],"stop_reason":7}', "$.stop_reason"),
    ],
)
def test_bad_bodies_name_the_path(body: bytes, where: str) -> None:
    with pytest.raises(ParseError, match="anthropic response") as info:
        MESSAGES.decode_response(body)
    assert where in str(info.value)
