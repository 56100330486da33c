"""The MCP server over Streamable HTTP at /llmproxy/mcp on a running mock's control port, driven by the
official `mcp` SDK's client: it lists every tool and calls each; the read-only token reads but gets a tool
error saying 403 on a mutating tool; no token is a 401; an unknown tool and arguments the API cannot take are
JSON-RPC invalid-params errors naming what is wrong; GET (no event stream) is a 405."""

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from llmproxy.control.mcp.stdio import api_tools
from llmproxy.environment import CONTROL_READ_ONLY_TOKEN_VARIABLE, CONTROL_TOKEN_VARIABLE
from llmproxy.session import Session
from tests.control.mcp_calls import exercise
from tests.mock.sdk_clients import serving

CLIENT = {"name": "a test", "version": "1"}
EXPECTATIONS = {"expectations": [{"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris."}}]}
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, EXPECTATIONS)


def mcp_url(proxy: Session) -> str:
    return proxy.control_api_url.replace("/llmproxy/api/v1", "/llmproxy/mcp")


def connected[T](proxy: Session, token: str | None, use: Callable[[Client], Awaitable[T]]) -> T:
    """`use` run with an SDK client of the proxy's MCP endpoint, sending `token` (None: none)."""

    async def run() -> T:
        headers = {"authorization": f"Bearer {token}"} if token is not None else {}
        async with (
            httpx2.AsyncClient(headers=headers, trust_env=False) as http,
            Client(streamable_http_client(mcp_url(proxy), http_client=http)) as client,
        ):
            return await use(client)

    return asyncio.run(run())


def full(proxy: Session) -> str:
    return proxy.environment[CONTROL_TOKEN_VARIABLE]


def test_the_sdk_lists_every_tool_and_calls_each(proxy: Session) -> None:
    async def use(client: Client) -> tuple[list[str], list[str]]:
        listed = await client.list_tools()
        return [tool.name for tool in listed.tools], await exercise(client)

    listed, called = connected(proxy, full(proxy), use)
    assert listed == [tool.name for tool in api_tools()]  # the control API's tools, one per endpoint and more
    assert set(called) == set(listed)


def test_a_tool_is_annotated_with_what_it_may_do(proxy: Session) -> None:
    async def use(client: Client) -> dict[str, Any]:
        return {tool.name: tool for tool in (await client.list_tools()).tools}

    tools = connected(proxy, full(proxy), use)
    assert tools["get_status"].annotations is not None
    assert tools["get_status"].annotations.read_only_hint is True
    assert tools["reset"].annotations is not None
    assert tools["reset"].annotations.read_only_hint is False
    assert "read-only token cannot call it" in (tools["reset"].description or "")
    schema = tools["retrieve_recorded_requests"].input_schema
    assert {"provider", "model", "path", "source", "testId", "since", "limit"} == set(schema["properties"])


def test_the_read_only_token_reads_and_is_refused_what_changes_the_run(proxy: Session) -> None:
    async def use(client: Client) -> tuple[Any, Any, Any]:
        status = await client.call_tool("get_status", {})
        reset = await client.call_tool("reset", {})
        chaos = await client.call_tool("set_chaos", {"host": "api.example.com", "chaos": {"errorStatus": 503}})
        return status, reset, chaos

    status, reset, chaos = connected(proxy, proxy.environment[CONTROL_READ_ONLY_TOKEN_VARIABLE], use)
    assert not status.is_error
    for refused in (reset, chaos):
        assert refused.is_error
        assert refused.structured_content["status"] == 403
        assert refused.content[0].text.startswith("403: ")
        assert "read-only token cannot" in refused.content[0].text
    assert proxy.intercept is not None
    assert proxy.intercept.hosts.snapshot() == {}  # nothing was changed


def test_unknown_tools_and_bad_arguments_are_json_rpc_errors_naming_them(proxy: Session) -> None:
    async def refused(client: Client, name: str, arguments: dict[str, Any]) -> MCPError:
        with pytest.raises(MCPError) as raised:
            await client.call_tool(name, arguments)
        return raised.value

    async def use(client: Client) -> list[MCPError]:
        return [
            await refused(client, "no_such_tool", {}),
            await refused(client, "retrieve_recorded_requests", {"limit": 0}),
            await refused(client, "get_status", {"verbose": True}),
            await refused(client, "create_expectation", {"expectations": [{"respond": {"txt": "x"}}]}),
            await refused(client, "mock_llm_completion", {"respond": {"text": "a"}, "error": {"status": 500}}),
            await refused(client, "retrieve_request_responses", {}),
        ]

    errors = connected(proxy, full(proxy), use)
    assert all(error.code == INVALID_PARAMS for error in errors)
    unknown, limit, extra, body, convenience, missing = (error.message for error in errors)
    assert "unknown tool 'no_such_tool'" in unknown
    assert "limit: Input should be greater than or equal to 1" in limit
    assert "$.verbose: not an argument of get_status" in extra
    assert "$.expectations[0].respond.txt" in body
    assert "needs exactly one of" in convenience
    assert "$.seq: required" in missing


def test_a_request_without_the_token_is_refused_and_get_has_no_stream(proxy: Session) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT},
    }
    for token in (None, "not-the-token"):
        status, headers = post(proxy, initialize, token)
        assert (status, headers["www-authenticate"]) == (401, "Bearer")
    with pytest.raises(ExceptionGroup):  # the SDK's client cannot connect either
        connected(proxy, None, lambda client: client.list_tools())

    status, headers = post(proxy, None, full(proxy), method="GET")
    assert (status, headers["allow"]) == (405, "POST")


def post(proxy: Session, message: Any, token: str | None, method: str = "POST") -> tuple[int, Any]:
    data = json.dumps(message).encode() if message is not None else None
    request = urllib.request.Request(mcp_url(proxy), data=data, method=method)
    request.add_header("content-type", "application/json")
    request.add_header("accept", "application/json, text/event-stream")
    if token is not None:
        request.add_header("authorization", f"Bearer {token}")
    try:
        with DIRECT.open(request, timeout=10) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers
