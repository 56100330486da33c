"""What a mock MCP server answers to what an SDK client would never send, by hand over Streamable HTTP: each
bad message gets the protocol's own error (a JSON-RPC error with its code, or the HTTP status the transport
names), and the mock goes on serving — MCP and the model alike (the official Anthropic SDK, after all of it)."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from llmproxy.session import Listening, Session, mocking
from tests.mock.mcp.raw import INITIALIZE, opened, post
from tests.mock.mcp.worked import write_worked

CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "get_forecast", "arguments": {}}}


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    folder = tmp_path_factory.mktemp("mcp")
    with mocking(write_worked(folder), Listening(ca_directory=folder / "ca")) as session:
        yield session


@pytest.fixture
def url(mock: Session) -> str:
    return f"{mock.base_url}/mcp/weather"


def error_of(body: Any) -> tuple[Any, int, str]:
    return body["id"], body["error"]["code"], body["error"]["message"]


def test_a_body_that_is_not_json_is_a_parse_error(url: str) -> None:
    status, _, body = post(url, None, body=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"')
    assert status == 400
    assert error_of(body)[:2] == (None, -32700)


def test_a_message_that_is_not_json_rpc_is_an_invalid_request(url: str) -> None:
    session = opened(url)
    status, _, body = post(url, {"id": 1, "method": "ping"}, session)
    assert status == 400
    assert error_of(body)[:2] == (1, -32600)
    status, _, body = post(url, {"jsonrpc": "2.0", "id": None, "method": "ping"}, session)
    assert status == 400
    assert error_of(body)[:2] == (None, -32600)
    status, _, body = post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": [1]}, session)
    assert status == 400
    assert error_of(body)[:2] == (2, -32602)


def test_an_unknown_method_is_method_not_found(url: str) -> None:
    status, _, body = post(url, {"jsonrpc": "2.0", "id": "x", "method": "tools/destroy"}, opened(url))
    assert status == 200
    assert error_of(body) == ("x", -32601, "method not found: tools/destroy")


def test_params_it_cannot_take_are_invalid_params(url: str) -> None:
    session = opened(url)
    unknown = {**CALL, "params": {"name": "get_weather", "arguments": {}}}
    assert error_of(post(url, unknown, session)[2])[1:] == (
        -32602,
        "unknown tool 'get_weather': tools/list lists the 2 there are",
    )
    prompt = {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "plan_trip", "arguments": {}}}
    assert error_of(post(url, prompt, session)[2])[1:] == (
        -32602,
        "prompts/get plan_trip: missing required argument city",
    )
    page = {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": "2"}}
    assert error_of(post(url, page, session)[2])[1] == -32602
    level = {"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel", "params": {"level": "loud"}}
    assert error_of(post(url, level, session)[2])[1] == -32602
    resource = {"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {"uri": "file:///nothing"}}
    _, _, body = post(url, resource, session)
    assert body["error"] == {
        "code": -32002,
        "message": "resource not found: file:///nothing",
        "data": {"uri": "file:///nothing"},
    }


def test_arguments_failing_the_input_schema_are_invalid_params_until_2025_11_25(url: str) -> None:
    _, _, body = post(url, CALL, opened(url, "2025-06-18"))
    assert error_of(body) == (7, -32602, "invalid arguments for tool get_forecast: $: 'city' is a required property")
    _, _, body = post(url, CALL, opened(url, "2025-11-25"))  # SEP-1303: the model sees it, and can correct itself
    assert body["result"] == {
        "content": [
            {"type": "text", "text": "invalid arguments for tool get_forecast: $: 'city' is a required property"}
        ],
        "isError": True,
    }
    wrong_type = {**CALL, "params": {"name": "get_forecast", "arguments": {"city": 7}}}
    _, _, body = post(url, wrong_type, opened(url, "2025-06-18"))
    assert error_of(body)[1:] == (-32602, "invalid arguments for tool get_forecast: $.city: 7 is not of type 'string'")


def test_a_session_is_required_kept_and_ended(url: str) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    status, _, body = post(url, ping)
    assert status == 400
    assert "Mcp-Session-Id" in error_of(body)[2]
    status, _, _ = post(url, ping, {"mcp-session-id": "no-such-session"})
    assert status == 404
    session = opened(url)
    assert post(url, ping, session)[:3:2] == (200, {"jsonrpc": "2.0", "id": 1, "result": {}})
    assert post(url, None, session, method="DELETE")[0] == 200
    assert post(url, ping, session)[0] == 404
    assert post(url, None, session, method="DELETE")[0] == 404
    assert post(url, None, {}, method="DELETE")[0] == 400


def test_notifications_and_responses_get_202_and_no_body(url: str) -> None:
    session = opened(url)
    cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
    assert post(url, cancelled, session) == (202, post(url, cancelled, session)[1], None)
    response = {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert post(url, response, session)[::2] == (202, None)


def test_get_is_405_and_other_protocol_versions_are_400(url: str) -> None:
    status, headers, _ = post(url, None, {"accept": "text/event-stream", **opened(url)}, method="GET")
    assert (status, headers["allow"]) == (405, "POST, DELETE")
    session = {**opened(url), "mcp-protocol-version": "2031-01-01"}
    status, _, body = post(url, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, session)
    assert status == 400
    assert "unsupported MCP-Protocol-Version 2031-01-01" in error_of(body)[2]


def test_a_version_it_does_not_speak_is_answered_with_its_newest(url: str) -> None:
    offered = {**INITIALIZE, "protocolVersion": "2099-01-01"}
    _, _, body = post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": offered})
    assert body["result"]["protocolVersion"] == "2025-11-25"
    missing = {**INITIALIZE}
    del missing["protocolVersion"]
    status, _, body = post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": missing})
    assert status == 200
    assert error_of(body)[1] == -32602


def test_batches_are_answered_for_2025_03_26_and_refused_after(url: str) -> None:
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "nope"}]
    status, _, body = post(url, batch, opened(url, "2025-03-26"))
    assert status == 200
    assert [answer["id"] for answer in body] == [1, 2]
    assert body[1]["error"]["code"] == -32601
    status, _, body = post(url, batch, opened(url, "2025-06-18"))
    assert status == 400
    assert error_of(body)[1] == -32600


def test_a_foreign_host_or_origin_is_refused(url: str) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    status, _, body = post(url, ping, {"host": "evil.example.com"})
    assert status == 403
    assert "DNS rebinding" in error_of(body)[2]
    status, _, _ = post(url, ping, {"origin": "http://evil.example.com"})
    assert status == 403
    session = opened(url)
    assert post(url, ping, {**session, "origin": "http://localhost:3000"})[0] == 200


def test_a_body_or_accept_it_cannot_serve_is_415_or_406(url: str) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert post(url, ping, {"content-type": "text/plain"})[0] == 415
    assert post(url, ping, {"accept": "text/html"})[0] == 406


def test_after_all_of_it_the_mock_serves_mcp_and_the_model(mock: Session, url: str) -> None:
    test_a_body_that_is_not_json_is_a_parse_error(url)
    _, _, body = post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, opened(url))
    assert [tool["name"] for tool in body["result"]["tools"]] == ["get_forecast", "refresh"]
    with anthropic.Anthropic(base_url=mock.base_url, api_key="any", max_retries=0) as client:
        message = client.messages.create(
            model="claude-haiku-4-5", max_tokens=100, messages=[{"role": "user", "content": "Weather in Paris?"}]
        )
    (call,) = [block for block in message.content if block.type == "tool_use"]
    assert (call.name, call.input) == ("mcp__weather__get_forecast", {"city": "Paris"})


def test_a_call_no_result_answers_is_a_tool_error_and_a_miss(tmp_path: Path) -> None:
    strict = {
        "mcpServers": [
            {
                "name": "strict",
                "tools": [{"name": "lookup", "results": [{"match": {"arguments": {"id": 1}}, "text": "one"}]}],
            }
        ]
    }
    path = tmp_path / "strict.json"
    path.write_text(json.dumps(strict))
    with mocking(path, Listening(ca_directory=tmp_path / "ca")) as session:
        url = f"{session.base_url}/mcp/strict"
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lookup", "arguments": {"id": 2}}}
        _, _, body = post(url, call, opened(url))
        log = session.mock_log
        assert log is not None
        misses = log.misses
    why = "no result of tool lookup answers these arguments; nearest, result 1: $.id: expected 1, got 2"
    assert body["result"] == {"content": [{"type": "text", "text": why}], "isError": True}
    assert [miss["miss"] for miss in misses] == [why]
