"""ConverseStream and invoke-stream decoding beyond round trips: what real Bedrock sends that our encoder
does not, and the shapes that must be refused with a path."""

import base64
import json

import pytest

from llmproxy.errors import ParseError
from llmproxy.framing.eventstream import encode_event
from llmproxy.model import ErrorKind, StopReason, ToolCall, Usage
from llmproxy.providers.base import JsonObject
from llmproxy.providers.bedrock import CONVERSE, INVOKE_ANTHROPIC
from llmproxy.providers.bedrock.wire import event_frame


def frames(*events: tuple[str, JsonObject]) -> list[bytes]:
    return [event_frame(name, payload) for name, payload in events]


def test_a_real_converse_stream() -> None:
    wire = frames(
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Think"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig"}}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Hi "}}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "there"}}),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        ("contentBlockStart", {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": '{"a":'}}}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": "1}"}}}),
        ("contentBlockStop", {"contentBlockIndex": 2}),
        ("messageStop", {"stopReason": "guardrail_intervened", "additionalModelResponseFields": {"x": 1}}),
        (
            "metadata",
            {
                "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 17, "cacheReadInputTokens": 10},
                "metrics": {"latencyMs": 250},
                "trace": {},
            },
        ),
        ("somethingNew", {"future": True}),
    )
    completion = CONVERSE.decode_stream(wire)
    assert completion.text == "Hi there"
    assert (completion.reasoning, completion.reasoning_signature) == ("Think", "sig")
    assert completion.tool_calls == (ToolCall("t1", "f", {"a": 1}),)
    assert completion.stop_reason is StopReason.CONTENT_FILTER
    assert completion.usage == Usage(input_tokens=13, output_tokens=4, cache_read_tokens=10)


def test_a_cut_stream_gives_what_arrived() -> None:
    wire = b"".join(
        frames(
            ("messageStart", {"role": "assistant"}),
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "par"}}),
        )
    )
    completion = CONVERSE.decode_stream([wire[:-3]])
    assert (completion.text, completion.usage, completion.stop_reason) == ("", None, None)
    assert CONVERSE.decode_stream([wire]).text == "par"


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}),
            "the index of a started tool use block",
        ),
        (("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "a", "toolUse": {}}}), "exactly one member"),
        (
            ("contentBlockDelta", {"contentBlockIndex": "0", "delta": {"text": "a"}}),
            r"\$.contentBlockIndex: expected an integer",
        ),
        (("messageStop", {"stopReason": 7}), r"\$.stopReason: expected a string"),
    ],
)
def test_bad_events_are_parse_errors_with_a_path(event: tuple[str, JsonObject], message: str) -> None:
    with pytest.raises(ParseError, match=f"bedrock converse stream: .*{message}"):
        CONVERSE.decode_stream(frames(event))


def test_a_block_index_keeps_its_kind() -> None:
    wire = frames(
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "a"}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "b"}}}),
    )
    with pytest.raises(ParseError, match="this index holds text, not reasoningContent"):
        CONVERSE.decode_stream(wire)


def test_invoke_chunks_must_be_base64_json() -> None:
    with pytest.raises(ParseError, match=r"bedrock invoke stream: \$.bytes: expected base64"):
        INVOKE_ANTHROPIC.decode_stream([event_frame("chunk", {"bytes": "not base64!"})])
    with pytest.raises(ParseError, match=r"expected base64 \(string argument should contain only ASCII"):
        INVOKE_ANTHROPIC.decode_stream([event_frame("chunk", {"bytes": "\x80"})])  # found by hypothesis
    with pytest.raises(ParseError, match="anthropic stream: not valid JSON"):
        INVOKE_ANTHROPIC.decode_stream([event_frame("chunk", {"bytes": base64.b64encode(b"{").decode()})])


def test_invoke_stream_error_frame_ends_the_stream() -> None:
    start = {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {"input_tokens": 1}}}
    chunk = event_frame("chunk", {"bytes": base64.b64encode(b'{"type":"ping"}').decode(), "p": "abcdefgh"})
    first = event_frame("chunk", {"bytes": base64.b64encode(json.dumps(start).encode()).decode()})
    failure = encode_event({":message-type": "error", ":error-code": "InternalFailure", ":error-message": "oops"})
    completion = INVOKE_ANTHROPIC.decode_stream([first, chunk, failure, b"ignored after the failure"])
    assert completion.id == "m"
    assert completion.error is not None
    assert (completion.error.kind, completion.error.message) == (ErrorKind.SERVER_ERROR, "oops")
