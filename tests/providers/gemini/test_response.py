"""Gemini response bodies and streams: what the encoders send, and decoding what the API sends."""

import json

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.gemini import GENERATE
from tests.golden.cases import CASES

USAGE = {"promptTokenCount": 100, "candidatesTokenCount": 20, "cachedContentTokenCount": 60, "thoughtsTokenCount": 30}


def body(**candidate: object) -> bytes:
    return json.dumps(
        {"candidates": [candidate], "usageMetadata": USAGE, "modelVersion": "m", "responseId": "r"}
    ).encode()


def test_usage_follows_the_neutral_convention() -> None:
    """Input includes cached tokens (as promptTokenCount does); output includes thoughts (which Gemini counts
    apart from the candidates)."""
    completion = GENERATE.decode_response(body(content={"parts": [{"text": "hi"}]}, finishReason="STOP"))
    assert completion.usage == Usage(input_tokens=100, output_tokens=50, cache_read_tokens=60, reasoning_tokens=30)
    wire = json.loads(GENERATE.encode_response(completion))["usageMetadata"]
    assert {key: wire[key] for key in USAGE} == USAGE
    assert wire["totalTokenCount"] == 150


@pytest.mark.parametrize(
    ("finish", "calls", "stop"),
    [
        ("STOP", False, StopReason.END_TURN),
        ("STOP", True, StopReason.TOOL_USE),  # Gemini has no tool-use reason: the parts say
        ("MAX_TOKENS", True, StopReason.MAX_TOKENS),
        ("SAFETY", False, StopReason.CONTENT_FILTER),
        ("RECITATION", False, StopReason.CONTENT_FILTER),
        ("MALFORMED_FUNCTION_CALL", False, StopReason.OTHER),
        ("SOMETHING_NEW", False, StopReason.OTHER),
    ],
)
def test_finish_reasons(finish: str, calls: bool, stop: StopReason) -> None:
    parts = [{"functionCall": {"name": "f"}}] if calls else []
    assert GENERATE.decode_response(body(content={"parts": parts}, finishReason=finish)).stop_reason is stop


def test_thoughts_signature_and_calls_in_snake_case() -> None:
    completion = GENERATE.decode_response(
        body(
            content={
                "role": "model",
                "parts": [
                    {"text": "Let me ", "thought": True},
                    {"text": "think.", "thought": True},
                    {"function_call": {"name": "a", "args": {"x": 1}}, "thought_signature": "c2ln"},
                    {"function_call": {"id": "b1", "name": "b"}},
                    {"executable_code": {"code": "1"}},
                ],
            },
            finish_reason="STOP",
        )
    )
    assert completion.reasoning == "Let me think."
    assert completion.reasoning_signature == "c2ln"
    assert completion.tool_calls == (ToolCall("", "a", {"x": 1}), ToolCall("b1", "b", {}))
    assert (completion.id, completion.model, completion.stop_reason) == ("r", "m", StopReason.TOOL_USE)


def test_the_signature_rides_on_the_first_call_else_the_last_part() -> None:
    parts = json.loads(GENERATE.encode_response(CASES["reasoning"]))["candidates"][0]["content"]["parts"]
    assert parts == [
        {"text": CASES["reasoning"].reasoning, "thought": True},
        {"text": "The answer is 42.", "thoughtSignature": "c2lnbmF0dXJlLWdvbGRlbg=="},
    ]
    with_calls = Completion(reasoning_signature="c2ln", tool_calls=(ToolCall("1", "a"), ToolCall("2", "b")))
    parts = json.loads(GENERATE.encode_response(with_calls))["candidates"][0]["content"]["parts"]
    assert [part.get("thoughtSignature") for part in parts] == ["c2ln", None]


def test_a_blocked_prompt_is_a_content_filter() -> None:
    blocked = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 7}}
    completion = GENERATE.decode_response(json.dumps(blocked).encode())
    assert (completion.stop_reason, completion.text, completion.usage) == (
        StopReason.CONTENT_FILTER,
        "",
        Usage(input_tokens=7),
    )


def test_an_error_body_where_a_response_was_expected() -> None:
    error = {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
    completion = GENERATE.decode_response(json.dumps(error).encode())
    assert completion == Completion(
        stop_reason=None, error=ProviderError(ErrorKind.OVERLOADED, "overloaded", "UNAVAILABLE", 503)
    )


def test_stream_chunks_are_complete_responses_ending_with_finish_and_usage() -> None:
    events = GENERATE.encode_stream(CASES["text"], delta_chars=8)
    assert all(event.startswith(b"data: {") and event.endswith(b"}\r\n\r\n") for event in events)
    chunks = [json.loads(event[6:]) for event in events]
    assert ["".join(p["text"] for p in c["candidates"][0]["content"]["parts"]) for c in chunks] == [
        "Hello! ",
        "How can ",
        "I help ",
        "you ",
        "today?",
    ]
    assert [c["candidates"][0].get("finishReason") for c in chunks] == [None] * 4 + ["STOP"]
    assert ["usageMetadata" in c for c in chunks] == [False] * 4 + [True]
    assert {c["responseId"] for c in chunks} == {"gold_text_1"}


def test_a_stream_as_a_json_array_decodes_like_sse() -> None:
    """Without `?alt=sse` the API streams one JSON array; any split reads the same."""
    chunks = [json.loads(event[6:]) for event in GENERATE.encode_stream(CASES["parallel_tools"])]
    wire = ("[" + ",\r\n".join(json.dumps(chunk) for chunk in chunks) + "]").encode()
    expected = GENERATE.visible(CASES["parallel_tools"])
    assert GENERATE.decode_stream([wire]) == expected
    assert GENERATE.decode_stream([wire[i : i + 7] for i in range(0, len(wire), 7)]) == expected
    assert GENERATE.decode_stream([b"  \r\n", wire]) == expected


def test_a_mid_stream_error_stops_reading() -> None:
    events = GENERATE.encode_stream(
        Completion(text="Half", error=ProviderError(ErrorKind.RATE_LIMIT, "slow down")), delta_chars=2
    )
    assert json.loads(events[-1][6:])["error"]["status"] == "RESOURCE_EXHAUSTED"
    completion = GENERATE.decode_stream([*events, b"data: not even json\r\n\r\n"])
    assert completion.text == "Half"
    assert completion.error == ProviderError(ErrorKind.RATE_LIMIT, "slow down", "RESOURCE_EXHAUSTED", 429)


def test_a_cut_stream_gives_what_arrived() -> None:
    wire = b"".join(GENERATE.encode_stream(CASES["text"], delta_chars=8))
    completion = GENERATE.decode_stream([wire[: wire.index(b"you")]])
    assert (completion.text, completion.stop_reason, completion.usage) == ("Hello! How can I help ", None, None)


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        (b"data: [1]\n\n", r"gemini stream: \$: expected an object"),
        (b'data: {"candidates": {}}\n\n', r"\$\.candidates: expected a list"),
        (b'[{"candidates": [{"content": {"parts": [{"thought": 1}]}}]}]', r"parts\[0\]\.thought: expected true"),
    ],
)
def test_bad_streams_name_the_field(wire: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        GENERATE.decode_stream([wire])
