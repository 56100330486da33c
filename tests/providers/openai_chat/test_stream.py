"""The chunk stream: exact events out; merging, truncation and in-band errors in."""

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.errors import ParseError
from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.openai_chat import CHAT
from tests.golden.cases import CASES


def payloads(events: list[bytes]) -> list[Any]:
    """Each event's data, JSON-decoded (or the raw text for `[DONE]`), checking data-only framing."""
    found: list[Any] = []
    for event in events:
        assert event.startswith(b"data: ")
        assert event.endswith(b"\n\n")
        assert event.count(b"\n") == 2
        data = event[len(b"data: ") : -2].decode()
        found.append(data if data == "[DONE]" else json.loads(data))
    return found


def test_wire_shape_of_a_text_answer() -> None:
    chunks = payloads(CHAT.encode_stream(CASES["max_tokens"], delta_chars=12))
    head = {"id": "gold_max_1", "object": "chat.completion.chunk", "created": 1_767_225_600, "model": "golden-model"}
    for chunk in chunks[:-1]:
        assert {key: chunk[key] for key in head} == head
    deltas = [chunk["choices"][0]["delta"] if chunk["choices"] else None for chunk in chunks[:-1]]
    assert deltas == [
        {"role": "assistant", "content": "", "refusal": None},
        {"content": "This answer "},
        {"content": "was cut off "},
        {"content": "in the mid"},
        {},
        None,
    ]
    assert [c["choices"][0]["finish_reason"] for c in chunks[:5]] == [None, None, None, None, "length"]
    assert all(chunk["usage"] is None for chunk in chunks[:5])
    assert chunks[5]["choices"] == []
    assert chunks[5]["usage"]["prompt_tokens"] == 8
    assert chunks[-1] == "[DONE]"


def test_tool_call_deltas_carry_id_and_name_once() -> None:
    chunks = payloads(CHAT.encode_stream(CASES["parallel_tools"], delta_chars=8))
    calls = [call for c in chunks[:-1] if c["choices"] for call in c["choices"][0]["delta"].get("tool_calls", [])]
    openings = [call for call in calls if "id" in call]
    assert openings == [
        {"index": 0, "id": "call_gold_a", "type": "function", "function": {"name": "get_weather", "arguments": ""}},
        {"index": 1, "id": "call_gold_b", "type": "function", "function": {"name": "get_weather", "arguments": ""}},
    ]
    for index, call in enumerate(CASES["parallel_tools"].tool_calls):
        fragments = [c["function"]["arguments"] for c in calls if c["index"] == index and "id" not in c]
        assert all(0 < len(fragment) <= 8 for fragment in fragments)
        assert json.loads("".join(fragments)) == call.arguments
        assert all(set(c) == {"index", "function"} for c in calls if c["index"] == index and "id" not in c)


@pytest.mark.parametrize("options", [None, {}, {"include_usage": False}])
def test_usage_chunk_only_when_asked_for(options: dict[str, bool] | None) -> None:
    request: dict[str, Any] = {"model": "m", "stream": True}
    if options is not None:
        request["stream_options"] = options
    chunks = payloads(CHAT.encode_stream(CASES["text"], request))
    assert all("usage" not in chunk and chunk["choices"] for chunk in chunks[:-1])
    assert CHAT.decode_stream(CHAT.encode_stream(CASES["text"], request)).usage is None


def test_usage_chunk_when_asked_for() -> None:
    request = {"model": "m", "stream": True, "stream_options": {"include_usage": True}}
    chunks = payloads(CHAT.encode_stream(CASES["cached_usage"], request))
    assert chunks[-2]["choices"] == []
    assert chunks[-2]["usage"]["prompt_tokens_details"]["cached_tokens"] == 1536
    assert CHAT.decode_stream(CHAT.encode_stream(CASES["cached_usage"], request)) == CHAT.visible(CASES["cached_usage"])


HAND_WRITTEN = (
    b": keep-alive\r\n\r\n"
    b'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x",'
    b'"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}]}\r\n\r\n'
    b'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x",'
    b'"choices":[{"index":1,"delta":{"content":"other choice"},"finish_reason":null},'
    b'{"index":0,"delta":{"content":"Let me check."},"finish_reason":null}]}\r\n\r\n'
    b'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x",'
    b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function",'
    b'"function":{"name":"get_weather","arguments":""}},{"index":0,"function":{"arguments":"{\\"city\\":"}}]},'
    b'"finish_reason":null}]}\n\n'
    b'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x",'
    b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"Paris\\"}"}}]},'
    b'"finish_reason":null}]}\r\r'
    b'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x",'
    b'"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
    b'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"gpt-x",'
    b'"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29,'
    b'"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":3}}}\n\n'
    b"data: [DONE]\n\n"
)
HAND_WRITTEN_DECODED = Completion(
    id="chatcmpl-9",
    model="gpt-x",
    created=1700000000,
    text="Let me check.",
    tool_calls=(ToolCall("call_1", "get_weather", {"city": "Paris"}),),
    stop_reason=StopReason.TOOL_USE,
    usage=Usage(input_tokens=20, output_tokens=9, cache_read_tokens=4, reasoning_tokens=3),
)


def test_merges_a_hand_written_stream() -> None:
    assert CHAT.decode_stream([HAND_WRITTEN]) == HAND_WRITTEN_DECODED


@given(cuts=st.lists(st.integers(0, len(HAND_WRITTEN)), max_size=30))
def test_any_byte_split_gives_the_same_completion(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    pieces = [HAND_WRITTEN[a:b] for a, b in zip([0, *points], [*points, len(HAND_WRITTEN)], strict=True)]
    assert CHAT.decode_stream(pieces) == HAND_WRITTEN_DECODED


def test_every_truncation_decodes_to_what_arrived() -> None:
    case = CASES["parallel_tools"]
    wire = b"".join(CHAT.encode_stream(case, delta_chars=5))
    for end in range(len(wire)):
        partial = CHAT.decode_stream([wire[:end]])
        assert case.text.startswith(partial.text)
        assert partial.error is None
        for got, want in zip(partial.tool_calls, case.tool_calls, strict=False):
            assert (got.id, got.name) == (want.id, want.name)
            assert (got.invalid_arguments or "") in json.dumps(want.arguments, ensure_ascii=False).replace(" ", "")
    assert CHAT.decode_stream([wire[: wire.index(b'"finish_reason":"tool_calls"')]]).stop_reason is None


def test_truncation_inside_a_multibyte_character() -> None:
    wire = b"".join(CHAT.encode_stream(CASES["unicode_multiline"], delta_chars=4))
    cut = wire.index("🚀".encode()) + 2
    assert CHAT.decode_stream([wire[:cut]]).text == "Zeile 1: “quoted” — ünïcödé ✓\n\nLine 3 with emoji "


def test_mid_stream_error_keeps_the_content_so_far() -> None:
    wire = [
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"choices":[{"index":0,"delta":{"content":"Hal"},"finish_reason":null}]}\n\n',
        b'data: {"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}\n\n',
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"choices":[{"index":0,"delta":{"content":"ignored"},"finish_reason":"stop"}]}\n\n',
    ]
    decoded = CHAT.decode_stream(wire)
    assert (decoded.text, decoded.stop_reason) == ("Hal", None)
    assert decoded.error == ProviderError(ErrorKind.SERVER_ERROR, "The server had an error", "server_error")


@pytest.mark.parametrize("kind", list(ErrorKind))
def test_encoded_errors_end_the_stream_and_round_trip(kind: ErrorKind) -> None:
    failed = Completion(id="c1", model="m", text="So far", error=ProviderError(kind, "went wrong", status=500))
    events = CHAT.encode_stream(failed)
    last = payloads(events)[-1]
    assert set(last) == {"error"}
    assert last["error"]["message"] == "went wrong"
    assert all(b"[DONE]" not in event and b'finish_reason":"' not in event for event in events)
    decoded = CHAT.decode_stream(events)
    assert decoded.error is not None
    assert decoded.error.kind is kind
    assert decoded.error.status is None
    assert decoded == CHAT.visible(failed)


def test_unknown_error_shapes_still_end_the_stream() -> None:
    decoded = CHAT.decode_stream([b'data: {"error":"boom"}\n\n'])
    assert decoded.error == ProviderError(ErrorKind.SERVER_ERROR, "boom")
    quota = CHAT.decode_stream([b'data: {"error":{"message":"pay up","type":"x","code":"insufficient_quota"}}\n\n'])
    assert quota.error is not None
    assert quota.error.kind is ErrorKind.QUOTA_EXCEEDED
    assert CHAT.decode_stream([b'data: {"error":null,"choices":[]}\n\n']).error is None


def test_empty_and_refusal_streams() -> None:
    assert CHAT.decode_stream([]) == Completion(stop_reason=None)
    refusal = Completion(id="r", model="m", text="", stop_reason=StopReason.REFUSAL)
    deltas = [c["choices"][0]["delta"] for c in payloads(CHAT.encode_stream(refusal))[:-1] if c["choices"]]
    assert {"refusal": ""} in deltas
    assert CHAT.decode_stream(CHAT.encode_stream(refusal)).stop_reason is StopReason.REFUSAL


def test_complete_events_that_are_not_json_are_refused() -> None:
    with pytest.raises(ParseError, match=r"openai chat stream: not valid JSON"):
        CHAT.decode_stream([b"data: {oops}\n\n", b"data: [DONE]\n\n"])
    with pytest.raises(ParseError, match=r"\$\.choices\[0\]\.delta\.content"):
        CHAT.decode_stream([b'data: {"choices":[{"index":0,"delta":{"content":7}}]}\n\n'])


LEGACY_FUNCTION_CALL_STREAM = [
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"role":"assistant","content":null,'
    b'"function_call":{"name":"get_weather","arguments":""}},"finish_reason":null}]}\n\n',
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"function_call":{"arguments":"{\\"city\\":"}},"finish_reason":null}]}\n\n',
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"function_call":{"arguments":"\\"Paris\\"}"}},"finish_reason":null}]}\n\n',
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{},"finish_reason":"function_call"}]}\n\n',
    b"data: [DONE]\n\n",
]


def test_legacy_function_call_deltas_merge_into_one_call() -> None:
    """Old `functions` clients still get `delta.function_call` fragments: name first, arguments after."""
    completion = CHAT.decode_stream(LEGACY_FUNCTION_CALL_STREAM)
    assert completion.tool_calls == (ToolCall("", "get_weather", {"city": "Paris"}),)
    assert completion.stop_reason is StopReason.TOOL_USE


@pytest.mark.parametrize("broken", [b'"function_call":7', b'"function_call":{"name":3}'])
def test_malformed_legacy_function_call_delta_is_a_parse_error(broken: bytes) -> None:
    event = LEGACY_FUNCTION_CALL_STREAM[0].replace(b'"function_call":{"name":"get_weather","arguments":""}', broken)
    with pytest.raises(ParseError):
        CHAT.decode_stream([event, *LEGACY_FUNCTION_CALL_STREAM[1:]])
