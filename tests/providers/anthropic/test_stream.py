"""Anthropic SSE streams: reassembly as the API sends them, exact encoding, any split, cut streams."""

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.errors import ParseError
from llmproxy.framing.sse import decode_all
from llmproxy.model import Completion, ErrorKind, OtherPart, ProviderError, ReasoningPart, StopReason, ToolCall, Usage
from llmproxy.providers.anthropic import MESSAGES
from tests.golden.cases import CASES


def sse(event: str, data: object) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def delta(index: int, body: dict[str, object]) -> str:
    return sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": body})


def start(index: int, block: dict[str, object]) -> str:
    return sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})


def stop(index: int) -> str:
    return sse("content_block_stop", {"type": "content_block_stop", "index": index})


MESSAGE_START = sse(
    "message_start",
    {
        "type": "message_start",
        "message": {
            "id": "msg_stream",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 4, "output_tokens": 1},
        },
    },
)
CITATION = {"type": "char_location", "cited_text": "x"}
SERVER_TOOL = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
API_STREAM = "".join(
    [
        MESSAGE_START,
        sse("ping", {"type": "ping"}),
        start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, {"type": "thinking_delta", "thinking": "Let me "}),
        delta(0, {"type": "thinking_delta", "thinking": "think."}),
        delta(0, {"type": "signature_delta", "signature": "sig-a"}),
        stop(0),
        start(1, {"type": "redacted_thinking", "data": "sig-b"}),
        stop(1),
        start(2, {"type": "text", "text": ""}),
        delta(2, {"type": "text_delta", "text": "Hi "}),
        delta(2, {"type": "citations_delta", "citation": CITATION}),
        sse("ping", {"type": "ping"}),
        delta(2, {"type": "text_delta", "text": "there"}),
        stop(2),
        start(3, SERVER_TOOL),
        delta(3, {"type": "input_json_delta", "partial_json": '{"query":"x"}'}),
        stop(3),
        start(4, {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}),
        delta(4, {"type": "input_json_delta", "partial_json": ""}),
        delta(4, {"type": "input_json_delta", "partial_json": '{"city": "Pa'}),
        delta(4, {"type": "input_json_delta", "partial_json": 'ris"}'}),
        stop(4),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 42, "cache_creation_input_tokens": 6, "input_tokens": None},
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]
).encode()

API_COMPLETION = Completion(
    id="msg_stream",
    model="claude-haiku",
    text="Hi there",
    tool_calls=(ToolCall("toolu_1", "get_weather", {"city": "Paris"}),),
    stop_reason=StopReason.TOOL_USE,
    reasoning="Let me think.",
    reasoning_signature="sig-b",
    # message_delta overwrote output and cache writes; the null input_tokens kept message_start's 10.
    usage=Usage(input_tokens=20, output_tokens=42, cache_read_tokens=4, cache_write_tokens=6),
    parts=(  # the cited text and the server tool call are kept whole, as a body would hold them
        ReasoningPart("Let me think.", "sig-a"),
        ReasoningPart(signature="sig-b", redacted=True),
        OtherPart(
            "text", {"type": "text", "text": "Hi there", "citations": [{"type": "char_location", "cited_text": "x"}]}
        ),
        OtherPart(
            "server_tool_use",
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
        ),
        ToolCall("toolu_1", "get_weather", {"city": "Paris"}),
    ),
)


def test_api_stream() -> None:
    assert MESSAGES.decode_stream([API_STREAM]) == API_COMPLETION
    # streamed again (citations one by one, the server tool's input in pieces), it reads back the same
    assert MESSAGES.decode_stream(MESSAGES.encode_stream(API_COMPLETION, delta_chars=3)) == API_COMPLETION


def test_crlf_and_byte_at_a_time() -> None:
    crlf = API_STREAM.replace(b"\n", b"\r\n")
    assert MESSAGES.decode_stream(crlf[i : i + 1] for i in range(len(crlf))) == API_COMPLETION


@given(cuts=st.lists(st.integers(min_value=0, max_value=len(API_STREAM)), max_size=30))
def test_any_split_of_the_api_stream(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(API_STREAM)]
    chunks = [API_STREAM[a:b] for a, b in itertools.pairwise(bounds)]
    assert MESSAGES.decode_stream(chunks) == API_COMPLETION


def test_encoded_reasoning_stream_exact_events() -> None:
    events = MESSAGES.encode_stream(CASES["reasoning"], delta_chars=1000)
    assert all(e.startswith(b"event: ") and e.endswith(b"\n\n") and b"\nid:" not in e for e in events)
    decoded = [(e.event, json.loads(e.data)) for e in decode_all(events)]
    assert [name for name, _ in decoded] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(name == data["type"] for name, data in decoded)
    message = decoded[0][1]["message"]
    assert message["content"] == []
    assert message["stop_reason"] is None
    assert message["usage"] == {
        "input_tokens": 20,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
    }
    assert decoded[1][1]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert decoded[3][1]["delta"] == {"type": "signature_delta", "signature": "c2lnbmF0dXJlLWdvbGRlbg=="}
    assert decoded[8][1]["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert decoded[8][1]["usage"]["output_tokens"] == 60
    assert decoded[8][1]["usage"]["output_tokens_details"] == {"thinking_tokens": 35}


def test_tool_use_starts_with_empty_input_and_streams_the_json() -> None:
    events = decode_all(MESSAGES.encode_stream(CASES["parallel_tools"], delta_chars=4))
    payloads = [json.loads(e.data) for e in events]
    starts = [p["content_block"] for p in payloads if p["type"] == "content_block_start"]
    assert starts[1:] == [
        {"type": "tool_use", "id": "call_gold_a", "name": "get_weather", "input": {}},
        {"type": "tool_use", "id": "call_gold_b", "name": "get_weather", "input": {}},
    ]
    pieces = [p["delta"]["partial_json"] for p in payloads if p.get("index") == 2 and "delta" in p]
    assert all(0 < len(piece) <= 4 for piece in pieces)
    assert json.loads("".join(pieces)) == {"city": "Tōkyō", "days": [1, 2]}
    assert [p["index"] for p in payloads if p["type"] == "content_block_start"] == [0, 1, 2]


def test_signature_alone_streams_as_redacted_thinking() -> None:
    completion = Completion(id="m", model="x", text="ok", reasoning_signature="opaque")
    payloads = [json.loads(e.data) for e in decode_all(MESSAGES.encode_stream(completion))]
    assert payloads[1]["content_block"] == {"type": "redacted_thinking", "data": "opaque"}
    assert payloads[2] == {"type": "content_block_stop", "index": 0}
    assert MESSAGES.decode_stream(MESSAGES.encode_stream(completion)) == MESSAGES.visible(completion)


def test_error_completion_streams_content_then_error_event() -> None:
    completion = Completion(
        id="m",
        model="x",
        text="partial answer",
        usage=Usage(input_tokens=9, output_tokens=50),
        error=ProviderError(ErrorKind.OVERLOADED, "Overloaded", status=529),
    )
    events = MESSAGES.encode_stream(completion)
    assert events[-1] == (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    assert not any(b"message_stop" in e or b"message_delta" in e for e in events)
    decoded = MESSAGES.decode_stream(events)
    assert decoded == MESSAGES.visible(completion)
    assert decoded.text == "partial answer"
    assert decoded.stop_reason is None
    assert decoded.error == ProviderError(ErrorKind.OVERLOADED, "Overloaded", "overloaded_error")
    assert decoded.usage == Usage(input_tokens=9, output_tokens=1)


def test_reading_stops_at_an_error_event() -> None:
    stream = MESSAGE_START + sse("error", {"type": "error", "error": {"type": "weird_error", "message": "boom"}})
    stream += start(0, {"type": "text", "text": "never"}) + sse("message_stop", {"type": "message_stop"})
    decoded = MESSAGES.decode_stream([stream.encode()])
    assert decoded.error == ProviderError(ErrorKind.SERVER_ERROR, "boom", "weird_error")
    assert decoded.text == ""


def test_cut_stream_keeps_what_arrived() -> None:
    cut = API_STREAM[: API_STREAM.index(b"event: message_delta")]
    decoded = MESSAGES.decode_stream([cut])
    assert decoded.stop_reason is None
    assert decoded.text == "Hi there"
    assert decoded.tool_calls == API_COMPLETION.tool_calls
    assert decoded.usage == Usage(input_tokens=14, output_tokens=1, cache_read_tokens=4)


def test_every_cut_point_decodes() -> None:
    """A recording can end anywhere, even inside a UTF-8 sequence or a JSON payload."""
    stream = b"".join(MESSAGES.encode_stream(CASES["unicode_multiline"], delta_chars=7))
    texts = []
    for end in range(len(stream) + 1):
        decoded = MESSAGES.decode_stream([stream[:end]])
        assert CASES["unicode_multiline"].text.startswith(decoded.text)
        texts.append(decoded.text)
    assert texts == sorted(texts, key=len)
    assert decoded == MESSAGES.visible(CASES["unicode_multiline"])


def test_cut_inside_tool_arguments_keeps_the_text() -> None:
    events = MESSAGES.encode_stream(CASES["tool_call"], delta_chars=6)
    decoded = MESSAGES.decode_stream(events[:4])  # message_start, block start, two deltas
    assert decoded.tool_calls == (ToolCall("call_gold_1", "get_weather", {}, '{"city":"Par'),)


def test_empty_stream() -> None:
    assert MESSAGES.decode_stream([]) == Completion(stop_reason=None)


@pytest.mark.parametrize(
    ("stream", "where"),
    [
        (b"event: message_start\ndata: [DONE]\n\n", "not valid JSON"),
        (b'event: x\ndata: {"type": 3}\n\n', "$.type"),
        (delta(0, {"type": "text_delta", "text": "x"}).encode(), "$.index: expected the index of a started"),
        ((start(0, {"type": "text"}) + delta(0, {"type": "text_delta", "text": 1})).encode(), "$.delta.text"),
        (  # true is 1 to Python, not an index to JSON
            (
                start(1, {"type": "text"})
                + sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": True, "delta": {"type": "text_delta", "text": "x"}},
                )
            ).encode(),
            "$.index: expected an integer",
        ),
        (b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":1}}\n\n', "stop_reason"),
    ],
)
def test_bad_streams_name_the_path(stream: bytes, where: str) -> None:
    with pytest.raises(ParseError, match="anthropic stream") as info:
        MESSAGES.decode_stream([stream])
    assert where in str(info.value)
