"""`llmproxy mock` over the Responses WebSocket: the expectations that answer the HTTP Responses API answer the
WebSocket one — text, tool calls, conversations, scripts, errors — through the proxy (the real host, TLS
intercepted) and at the base URL, read by the official openai SDK. A warm-up takes no turn, and a request that
names an answer the connection never gave is told so, as the API tells it."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmproxy.session import Session
from tests.mock.sdk_clients import openai_client, serving
from tests.openai_websocket import answer, at_base_url, through_proxy

CALL = {"name": "exec_command", "arguments": {"cmd": "echo hi"}}
EXPECTATIONS = {
    "expectations": [
        {"match": {"model": "fails"}, "error": {"status": 429, "message": "slow down", "retryAfter": 2}},
        {
            "match": {"model": "scripted"},
            "script": {"turns": [{"type": "assistant", "text": "one"}, {"type": "assistant", "text": "two"}]},
        },
        {
            "conversation": {
                "match": {"model": "agent"},
                "isolateBy": {"source": "header", "name": "x-session"},
                "turns": [
                    {"match": {"turnIndex": 0}, "respond": {"text": "Running it.", "toolCalls": [CALL]}},
                    {"match": {"containsToolResultFor": "exec_command"}, "respond": {"text": "It printed hi."}},
                ],
            }
        },
    ]
}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, EXPECTATIONS)


def connection(proxy: Session, door: str) -> Any:
    """A connection through `door`, its own session of the conversation."""
    session = {"x-session": door}
    if door == "base URL":
        return at_base_url(proxy.base_url, session)
    return through_proxy(proxy.url, Path(proxy.environment["SSL_CERT_FILE"]), session)


@pytest.mark.parametrize("door", ["proxy", "base URL"])
def test_a_tool_loop_on_one_connection_with_a_warm_up(proxy: Session, door: str) -> None:
    """Codex CLI's pattern: a warm-up, the first turn naming it, the tool output sent alone, naming the first
    turn's answer; the conversation advances turn by turn as it does over HTTP."""
    with connection(proxy, door) as socket:
        socket.send({"type": "response.create", "model": "agent", "input": [], "generate": False})
        warmup = []
        for event in socket:
            warmup.append(event)
            if event.type == "response.completed":
                break
        assert [e.type for e in warmup][-1] == "response.completed"
        assert warmup[-1].response.output == []
        first = answer(socket, model="agent", input="run it", previous_response_id=warmup[-1].response.id)
        called = first[-1].response
        assert [item.type for item in called.output] == ["message", "function_call"]
        assert called.output[1].name == "exec_command"
        output = [{"type": "function_call_output", "call_id": called.output[1].call_id, "output": "hi"}]
        second = answer(socket, model="agent", input=output, previous_response_id=called.id)
    assert second[-1].response.output_text == "It printed hi."
    log = proxy.mock_log
    assert log is not None
    answered = [e for e in log.entries if e.get("answeredBy", "").startswith(("warm-up", "conversation"))][-3:]
    turns = [f"conversation 3 (session {door}) turn {n}" for n in (1, 2)]
    assert [e["answeredBy"] for e in answered] == ["warm-up (asks for no output)", *turns]
    assert answered[2]["turnIndex"] == 1
    assert all(entry["websocket"] for entry in answered)


def test_the_same_expectations_answer_http_and_websocket(proxy: Session) -> None:
    with at_base_url(proxy.base_url) as socket:
        over_websocket = answer(socket, model="scripted", input="hello")[-1].response.output_text
    with openai_client(proxy) as client:
        over_http = client.responses.create(model="scripted", input="hello").output_text
    assert (over_websocket, over_http) == ("one", "two")


def test_an_error_answer_is_the_error_message_codex_reads(proxy: Session) -> None:
    with at_base_url(proxy.base_url) as socket:
        (error,) = answer(socket, model="fails", input="hello")
    assert error.type == "error"
    assert error.status == 429
    assert error.error.message == "slow down"
    assert error.model_dump()["headers"]["retry-after"] == "2"  # where Codex CLI reads an error's headers


def test_an_unknown_previous_response_is_not_found(proxy: Session) -> None:
    with at_base_url(proxy.base_url) as socket:
        (error,) = answer(socket, model="agent", input="x", previous_response_id="resp_never")
    assert error.type == "error"
    assert error.error.code == "previous_response_not_found"


def test_a_message_that_is_not_a_request_is_answered_with_an_error(proxy: Session) -> None:
    with at_base_url(proxy.base_url) as socket:
        socket.send_raw('{"type": "response.cancel"}')
        error = next(iter(socket))
    assert error.type == "error"
    assert "llmproxy answers only requests" in error.error.message
