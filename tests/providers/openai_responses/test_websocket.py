"""The Responses API over WebSocket: requests read whole on a connection, answers as messages, errors as the
frames Codex CLI reads, and route detection of the upgrade."""

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmproxy.model import Completion, Operation, Provider, StopReason, ToolCall, Usage
from llmproxy.providers.openai_responses import RESPONSES
from llmproxy.providers.openai_responses.stream import stream_events
from llmproxy.providers.openai_responses.websocket import (
    RESPONSES_OVER_WEBSOCKET,
    ResponsesConnection,
    ends_answer,
    error_message,
    is_request,
    unknown_reference,
)
from llmproxy.providers.registry import chat_codec, websocket_codec
from llmproxy.providers.routes import detect

CAPTURED = Path(__file__).parents[2] / "fixtures" / "captured"
UPGRADE = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13"}
CALL = Completion(
    id="resp_call",
    text="Running it.",
    tool_calls=(ToolCall("call_1", "exec_command", {"cmd": "echo hi"}),),
    stop_reason=StopReason.TOOL_USE,
    usage=Usage(10, 5),
)


def message(number: int) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((CAPTURED / f"codex-websocket-0.169.0-message{number}.json").read_text())["body"]
    return body


def answer(completion: Completion, request: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return stream_events(completion, request)


def test_the_upgrade_is_a_websocket_route_with_its_codecs() -> None:
    for host, path in (("api.openai.com", "/v1/responses"), ("chatgpt.com", "/backend-api/codex/responses")):
        route = detect(host, path, UPGRADE, method="GET")
        assert route is not None
        assert (route.provider, route.operation, route.streaming, route.websocket) == (
            Provider.OPENAI,
            Operation.RESPONSES,
            True,
            True,
        )
        assert chat_codec(route) is RESPONSES_OVER_WEBSOCKET
        assert websocket_codec(route) is not None
    assert detect("127.0.0.1", "/v1/responses", {"upgrade": "WebSocket"}, method="GET") is not None  # a base URL
    assert detect("api.openai.com", "/v1/responses", {}, method="GET") is None  # no upgrade: not the API
    assert detect("api.openai.com", "/v1/chat/completions", UPGRADE, method="GET") is None  # no WebSocket there
    http = detect("api.openai.com", "/v1/responses", {})
    assert http is not None
    assert not http.websocket
    assert websocket_codec(http) is None


def test_codex_session_is_read_whole_request_by_request() -> None:
    """The captured session: a warm-up, the first turn naming it, the tool output naming the first turn's
    answer. Read whole, the tool-output request is the first turn's input, its output, and the new item."""
    warmup, first, second = message(1), message(2), message(3)
    connection = ResponsesConnection()
    assert is_request(warmup)
    assert warmup["generate"] is False
    whole = connection.request(warmup)
    assert whole is not None
    assert "type" not in whole
    assert whole["input"] == []
    connection.answered(answer(Completion(id=first["previous_response_id"]), whole))

    whole = connection.request(first)
    assert whole is not None
    assert "previous_response_id" not in whole
    assert whole["input"] == first["input"]
    given = answer(replace_id(CALL, second["previous_response_id"]), whole)
    connection.answered(given)

    whole = connection.request(second)
    assert whole is not None
    output = [event["item"] for event in given if event["type"] == "response.output_item.done"]
    assert [item["type"] for item in output] == ["message", "function_call"]
    assert whole["input"] == [*first["input"], *output, *second["input"]]
    assert {key: value for key, value in whole.items() if key != "input"} == {
        key: value for key, value in second.items() if key not in ("input", "type", "previous_response_id")
    }
    conversation = RESPONSES_OVER_WEBSOCKET.decode_request(orjson.dumps(whole))
    assert conversation.assistant_turns == 1
    assert conversation.messages[-1].tool_results[0].tool_call_id == "call_capture_1"


def replace_id(completion: Completion, id_: str) -> Completion:
    return Completion(
        id=id_,
        text=completion.text,
        tool_calls=completion.tool_calls,
        stop_reason=completion.stop_reason,
        usage=completion.usage,
    )


def test_a_reference_to_an_answer_the_connection_never_completed_is_unknown() -> None:
    connection = ResponsesConnection()
    assert connection.request({"type": "response.create", "previous_response_id": "resp_x", "input": []}) is None
    connection.request({"type": "response.create", "input": [{"role": "user", "content": "hi"}]})
    failed = answer(Completion(id="resp_failed", stop_reason=StopReason.END_TURN))
    failed[-1] = {"type": "response.failed", "response": {"id": "resp_failed", "status": "failed"}}
    connection.answered(failed)
    assert connection.request({"type": "response.create", "previous_response_id": "resp_failed", "input": []}) is None
    frame = orjson.loads(unknown_reference({"previous_response_id": "resp_failed"}))
    assert frame["error"]["code"] == "previous_response_not_found"
    assert frame["status"] == 400


def test_answers_end_with_their_final_event_or_an_error() -> None:
    events = answer(CALL)
    assert [ends_answer(event) for event in events] == [False] * (len(events) - 1) + [True]
    assert ends_answer({"type": "error", "error": {"message": "x"}})
    assert not ends_answer({"type": "codex.rate_limits"})
    assert not ends_answer("response.completed")
    assert not is_request({"type": "response.steer"})


def test_messages_are_the_stream_events_unframed_and_decode_back() -> None:
    request = {"model": "gpt-6", "input": [], "stream": True}
    messages = RESPONSES_OVER_WEBSOCKET.encode_stream(CALL, request)
    frames = RESPONSES.encode_stream(CALL, request)
    assert [b"event: %s\ndata: %s\n\n" % (orjson.loads(m)["type"].encode(), m) for m in messages] == frames
    decoded = RESPONSES_OVER_WEBSOCKET.decode_stream(messages)
    assert decoded == RESPONSES.decode_stream(frames)
    assert (decoded.text, decoded.tool_calls, decoded.usage) == (CALL.text, CALL.tool_calls, CALL.usage)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}}', "slow down"),
        (b"<html>bad gateway</html>", "<html>bad gateway</html>"),
    ],
)
def test_an_http_error_travels_as_the_error_frame_codex_reads(body: bytes, expected: str) -> None:
    headers = {"content-type": "application/json", "retry-after": "2", "x-should-retry": "false"}
    frame = orjson.loads(error_message(429, headers, body))
    assert frame["type"] == "error"
    assert frame["status"] == 429
    assert frame["error"]["message"] == expected
    assert frame["headers"] == {"retry-after": "2", "x-should-retry": "false"}
