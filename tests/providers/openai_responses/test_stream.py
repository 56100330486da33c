"""Streams: the encoded event sequence, and decoding streams as servers (and cut connections) send them."""

import json
from typing import Any

import pytest

from llmproxy.framing.sse import decode_all
from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.openai_responses import RESPONSES
from tests.golden.cases import CASES

FAILED = Completion(
    id="resp_fail",
    model="m",
    created=5,
    text="partial answer",
    tool_calls=(ToolCall("call_1", "f", {"x": 1}),),
    error=ProviderError(ErrorKind.RATE_LIMIT, "Rate limit reached. Please try again in 1.5s.", "rate_limit_exceeded"),
    usage=Usage(input_tokens=3, output_tokens=4),
)


def frame(*events: dict[str, Any]) -> list[bytes]:
    """Events as a server frames them, numbered in order."""
    return [
        f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': n})}\n\n".encode()
        for n, event in enumerate(events)
    ]


def payloads(frames: list[bytes]) -> list[dict[str, Any]]:
    events = decode_all(frames)
    assert all(event.event == json.loads(event.data)["type"] for event in events)
    return [json.loads(event.data) for event in events]


@pytest.mark.parametrize("delta_chars", [1, 5, 16, 1000])
@pytest.mark.parametrize("case", [*CASES.values(), FAILED], ids=[*CASES, "failed"])
def test_event_sequence_structure(case: Completion, delta_chars: int) -> None:
    frames = RESPONSES.encode_stream(case, delta_chars=delta_chars)
    assert not any(line.startswith(b"id:") for frame in frames for line in frame.splitlines())
    events = payloads(frames)
    assert len(events) == len(frames)  # one event per element
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert [e["type"] for e in events[:2]] == ["response.created", "response.in_progress"]
    assert events[0]["response"]["status"] == "in_progress"
    assert events[0]["response"]["output"] == []
    final = events[-1]
    assert final["type"] == {"completed": "response.completed", "incomplete": "response.incomplete"}.get(
        final["response"]["status"], "response.failed"
    )
    lifecycle = [e for e in events if "response" in e]
    assert len(lifecycle) == 3
    assert {e["response"]["id"] for e in lifecycle} == {RESPONSES.visible(case).id}

    open_items: dict[int, str] = {}
    done: list[dict[str, Any]] = []
    for event in events[2:-1]:
        if event["type"] == "response.output_item.added":
            assert event["output_index"] == len(done)
            assert not open_items
            open_items[event["output_index"]] = event["item"]["id"]
        elif event["type"] == "response.output_item.done":
            assert open_items.pop(event["output_index"]) == event["item"]["id"]
            done.append(event["item"])
        else:  # content events only for the open item
            assert open_items == {event["output_index"]: event["item_id"]}
    assert not open_items
    assert done == final["response"]["output"]


def test_text_and_call_event_order() -> None:
    events = payloads(RESPONSES.encode_stream(CASES["parallel_tools"], delta_chars=8))
    types = [e["type"] for e in events]
    text_deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert "".join(text_deltas) == "Checking both cities."
    assert all(len(d) <= 8 for d in text_deltas)
    assert all(e["logprobs"] == [] for e in events if e["type"] == "response.output_text.delta")
    first_call = types.index("response.function_call_arguments.delta")
    assert types[: first_call + 1] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * len(text_deltas),
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
    ]
    added = events[types.index("response.output_item.added", first_call - 2)]["item"]
    assert (added["arguments"], added["status"], added["call_id"]) == ("", "in_progress", "call_gold_a")
    assert types[-1] == "response.completed"


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_golden_cases_decode_at_every_byte_split(case: Completion) -> None:
    stream = b"".join(RESPONSES.encode_stream(case, delta_chars=7))
    for cut in range(0, len(stream), 97):
        assert RESPONSES.decode_stream([stream[:cut], stream[cut:]]) == RESPONSES.visible(case)


def test_truncated_streams_return_what_arrived() -> None:
    case = CASES["parallel_tools"]
    frames = RESPONSES.encode_stream(case, delta_chars=4)
    stream = b"".join(frames)
    for cut in range(len(stream)):  # every prefix: never raises, never invents a stop
        partial = RESPONSES.decode_stream([stream[:cut]])
        if cut < len(stream) - len(frames[-1]):
            assert partial.stop_reason is None
            assert partial.usage is None
        assert case.text.startswith(partial.text)
    before_completed = RESPONSES.decode_stream(frames[:-1])
    assert before_completed == Completion(
        id="gold_par_1",
        model="golden-model",
        created=1_767_225_600,
        text=case.text,
        tool_calls=case.tool_calls,
        stop_reason=None,
        usage=None,
    )
    # mid-arguments: the call is not finished, its arguments are what arrived
    types = [json.loads(e.data)["type"] for e in decode_all(frames)]
    mid = types.index("response.function_call_arguments.delta") + 2
    call = RESPONSES.decode_stream(frames[:mid]).tool_calls[0]
    assert (call.id, call.name, call.arguments) == ("call_gold_a", "get_weather", {})
    assert call.invalid_arguments is not None
    assert '{"city":"Paris"}'.startswith(call.invalid_arguments)
    assert RESPONSES.decode_stream([]) == Completion(stop_reason=None)


def test_response_failed() -> None:
    decoded = RESPONSES.decode_stream(RESPONSES.encode_stream(FAILED))
    assert decoded == RESPONSES.visible(FAILED)
    assert decoded.error == FAILED.error
    assert (decoded.text, decoded.tool_calls, decoded.stop_reason) == (FAILED.text, FAILED.tool_calls, None)
    final = payloads(RESPONSES.encode_stream(FAILED))[-1]
    assert final["type"] == "response.failed"
    assert final["response"]["status"] == "failed"
    assert final["response"]["error"] == {
        "code": "rate_limit_exceeded",
        "message": "Rate limit reached. Please try again in 1.5s.",
    }


def test_error_event() -> None:
    created = {"type": "response.created", "response": {"id": "resp_e", "status": "in_progress", "output": []}}
    error = {"type": "error", "code": "server_is_overloaded", "message": "busy", "param": None}
    decoded = RESPONSES.decode_stream(frame(created, error))
    assert decoded.error == ProviderError(ErrorKind.OVERLOADED, "busy", "server_is_overloaded")
    assert (decoded.id, decoded.stop_reason) == ("resp_e", None)
    nested = {"type": "error", "error": {"code": "insufficient_quota", "message": "pay up"}}
    assert RESPONSES.decode_stream(frame(created, nested)).error == ProviderError(
        ErrorKind.QUOTA_EXCEEDED, "pay up", "insufficient_quota"
    )


MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
USAGE = {
    "input_tokens": 1200,
    "input_tokens_details": {"cached_tokens": 1024},
    "output_tokens": 300,
    "output_tokens_details": {"reasoning_tokens": 256},
    "total_tokens": 1500,
}


def _text_turn(final: dict[str, Any], *, with_done: bool = True) -> list[bytes]:
    done_item = {**MESSAGE, "status": "completed", "content": [{"type": "output_text", "text": "Hello there"}]}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_1", "created_at": 9, "model": "gpt-5", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": MESSAGE},
        {"type": "response.content_part.added", **where, "part": {"type": "output_text", "text": ""}},
        {"type": "response.output_text.delta", **where, "delta": "Hello"},
        {"type": "response.output_text.delta", **where, "delta": " there"},
    ]
    if with_done:
        events.append({"type": "response.output_item.done", "output_index": 0, "item": done_item})
    return frame(*events, final)


def test_incomplete_and_usage_mapping() -> None:
    final = {
        "type": "response.incomplete",
        "response": {
            "id": "resp_1",
            "created_at": 9,
            "model": "gpt-5",
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": [],
            "usage": USAGE,
        },
    }
    assert RESPONSES.decode_stream(_text_turn(final)) == Completion(
        id="resp_1",
        model="gpt-5",
        created=9,
        text="Hello there",
        stop_reason=StopReason.MAX_TOKENS,
        usage=Usage(input_tokens=1200, output_tokens=300, cache_read_tokens=1024, reasoning_tokens=256),
    )


def test_codex_backend_completed_without_output_uses_done_items_then_deltas() -> None:
    """The ChatGPT backend may close with `response.completed` whose `output` is empty (store: false)."""
    final = {"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "usage": USAGE}}
    expected = Completion(
        id="resp_1",
        text="Hello there",
        stop_reason=StopReason.END_TURN,
        usage=Usage(input_tokens=1200, output_tokens=300, cache_read_tokens=1024, reasoning_tokens=256),
    )
    assert RESPONSES.decode_stream(_text_turn(final)) == expected
    assert RESPONSES.decode_stream(_text_turn(final, with_done=False)) == expected


def test_completed_output_wins_and_done_terminator_is_tolerated() -> None:
    output = [{"type": "message", "content": [{"type": "output_text", "text": "final word"}]}]
    final = {"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": output}}
    frames = [*_text_turn(final), b"data: [DONE]\n\n", b"data: not json, never read\n\n"]
    assert RESPONSES.decode_stream(frames).text == "final word"


def test_reasoning_from_deltas_and_done_text() -> None:
    item = {"id": "rs_1", "type": "reasoning", "summary": []}
    where = {"item_id": "rs_1", "output_index": 0}
    events = frame(
        {"type": "response.created", "response": {"id": "r"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.reasoning_summary_text.delta", **where, "summary_index": 0, "delta": "Fir"},
        {"type": "response.reasoning_summary_text.delta", **where, "summary_index": 0, "delta": "st"},
        {"type": "response.reasoning_summary_text.delta", **where, "summary_index": 1, "delta": "Sec"},
        {"type": "response.reasoning_summary_text.done", **where, "summary_index": 1, "text": "Second"},
        {"type": "response.output_text.delta", "item_id": "x", "output_index": 5, "content_index": 0, "delta": "?"},
    )
    decoded = RESPONSES.decode_stream(events)
    assert (decoded.reasoning, decoded.text, decoded.stop_reason) == ("First\n\nSecond", "", None)
