"""The mock's MCP servers over Streamable HTTP, driven by the official `mcp` SDK's client as an agent's MCP
client would: at the server's path on the mock's base URL, and through the proxy under the real server's host
(`https://mcp.example.com/mcp`, llmproxy's CA trusted). Every promise docs/mcp.md makes of its worked example
holds; a tool's log messages and progress reach the client before its result; the request log names each call;
chaos meets MCP requests as it meets LLM calls."""

import asyncio
import json
import ssl
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import LoggingMessageNotificationParams

from llmproxy.intercept.options import intercept_plan
from llmproxy.session import Listening, Session, mocking
from tests.control.test_api import call
from tests.mock.mcp.raw import INITIALIZE, post
from tests.mock.mcp.worked import WORKED, check_worked, text, write_worked


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    folder = tmp_path_factory.mktemp("mcp")
    with mocking(write_worked(folder), Listening(ca_directory=folder / "ca")) as session:
        yield session


def connected[T](
    url: str, use: Callable[[Client], Awaitable[T]], http: httpx2.AsyncClient | None = None, **options: Any
) -> T:
    async def run() -> T:
        async with (
            http or httpx2.AsyncClient(trust_env=False) as client_http,
            Client(streamable_http_client(url, http_client=client_http), **options) as client,
        ):
            return await use(client)

    return asyncio.run(run())


def test_at_the_base_url_the_sdk_gets_what_the_docs_promise(tmp_path: Path) -> None:
    with mocking(write_worked(tmp_path), Listening(ca_directory=tmp_path / "ca")) as session:
        connected(f"{session.base_url}/mcp/weather", check_worked)
        lines = session.mock_log.summary() if session.mock_log else ""
    assert "mcp server weather: tools/call get_forecast → result 1" in lines
    assert "mcp server weather: tools/call get_forecast → result 3 sequence step 2" in lines
    assert "mcp server weather: prompts/get plan_trip → prompt plan_trip" in lines


def test_through_the_proxy_the_real_servers_url_reaches_the_mock(tmp_path: Path) -> None:
    with mocking(write_worked(tmp_path), Listening(ca_directory=tmp_path / "ca")) as session:
        trusted = ssl.create_default_context(cafile=session.environment["SSL_CERT_FILE"])
        http = httpx2.AsyncClient(proxy=session.url, verify=trusted, trust_env=False)
        connected(WORKED["mcpServers"][0]["url"], check_worked, http)
        entries = session.mock_log.entries if session.mock_log else []
    called = [entry for entry in entries if entry.get("mcp", {}).get("asked") == "tools/call get_forecast"]
    assert {entry["host"] for entry in called} == {"mcp.example.com"}
    assert len(called) == 5


def test_a_tools_log_messages_and_progress_reach_the_client_before_its_result(mock: Session) -> None:
    logged: list[LoggingMessageNotificationParams] = []
    progress: list[tuple[float, float | None, str | None]] = []

    async def log(params: LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async def step(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def use(client: Client) -> tuple[str, str]:
        with pytest.warns(MCPDeprecationWarning):  # deprecated from 2026-07-28; the mock speaks 2025-11-25
            await client.set_logging_level("info")
        first = await client.call_tool("refresh", {}, progress_callback=step)
        return text(first), text(await client.call_tool("refresh", {}))

    first, second = connected(f"{mock.base_url}/mcp/weather", use, logging_callback=log)
    assert (first, second) == ("Refreshed 3 stations.", "Already fresh.")
    assert [(entry.level, entry.data, entry.logger) for entry in logged] == [("info", "refresh started", "stations")]
    assert progress == [(1, 3, None), (3, 3, "done")]


def test_a_log_level_above_the_messages_keeps_them_from_the_client(tmp_path: Path) -> None:
    logged: list[LoggingMessageNotificationParams] = []

    async def log(params: LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async def use(client: Client) -> str:
        with pytest.warns(MCPDeprecationWarning):
            await client.set_logging_level("error")
        return text(await client.call_tool("refresh", {}))

    with mocking(write_worked(tmp_path), Listening(ca_directory=tmp_path / "ca")) as session:
        assert connected(f"{session.base_url}/mcp/weather", use, logging_callback=log) == "Refreshed 3 stations."
    assert logged == []


def test_chaos_meets_mcp_requests_as_it_meets_llm_calls(tmp_path: Path) -> None:
    chaos = tmp_path / "chaos.json"
    rule = {"match": {"path": "/mcp/weather"}, "chaos": {"errorStatus": 503, "failRequestCount": 1}}
    chaos.write_text(json.dumps({"rules": [rule]}))
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}
    plan = intercept_plan(chaos=[chaos])
    with mocking(write_worked(tmp_path), Listening(ca_directory=tmp_path / "ca"), intercept=plan) as session:
        url = f"{session.base_url}/mcp/weather"
        faulted, _, _ = post(url, initialize)
        status, headers, body = post(url, initialize)  # the rule's one failure is spent
    assert faulted == 503
    assert status == 200
    assert body["result"]["serverInfo"]["name"] == "weather"
    assert headers["mcp-session-id"]


def test_a_server_added_over_the_control_api_serves_at_once(mock: Session) -> None:
    def server(answer: str) -> dict[str, Any]:
        return {"mcpServers": [{"name": "late", "tools": [{"name": "ping_back", "results": [{"text": answer}]}]}]}

    async def use(client: Client) -> tuple[str, str]:
        first = text(await client.call_tool("ping_back", {}))
        status, _, _ = call(mock, "POST", "/expectations", server("pong again"))  # the same name: replaced
        assert status == 200
        return first, text(await client.call_tool("ping_back", {}))  # in the same session

    status, _, _ = call(mock, "POST", "/expectations", server("pong"))
    assert status == 200
    assert connected(f"{mock.base_url}/mcp/late", use) == ("pong", "pong again")
