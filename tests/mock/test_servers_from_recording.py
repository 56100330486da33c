"""From a recording to a mock of the tool servers and agents it talked to: an agent's traffic to a mock MCP
server (docs/mcp.md's worked example) and to a mock A2A agent (docs/a2a.md's) is recorded through the proxy,
`cassette to-expectations` writes the servers and agents it saw, and `llmproxy mock` serving that file gives the
official SDK clients the same results as the originals did."""

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import httpx2
from a2a.client import ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest
from a2a.utils.errors import A2AError
from click.testing import CliRunner
from google.protobuf import json_format
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from llmproxy.cli import main
from llmproxy.session import Listening, mocking, recording
from tests.mock.a2a.worked import WORKED as A2A_WORKED
from tests.mock.mcp.worked import WORKED as MCP_WORKED


async def mcp_session(client: Client) -> list[Any]:
    """What an agent's MCP client asks of the weather server, and everything it gets back."""
    got: list[Any] = [(await client.list_tools()).model_dump()]
    for city in ("Paris", "OSLO", "Rome", "Rome", "Rome"):
        try:
            got.append((await client.call_tool("get_forecast", {"city": city})).model_dump())
        except MCPError as error:
            got.append((error.code, error.error.message))
    got.append((await client.call_tool("refresh", {})).model_dump())
    got.append((await client.call_tool("refresh", {})).model_dump())
    got.append((await client.list_resources()).model_dump())
    got.append((await client.read_resource("file:///cities.txt")).model_dump())
    got.append((await client.get_prompt("plan_trip", {"city": "Rome", "mood": "slow"})).model_dump())
    return got


async def a2a_session(url: str, http: httpx.AsyncClient) -> list[Any]:
    """What an agent asks of the translator, over JSON then a stream, and what it gets back (ids aside)."""
    got: list[Any] = []
    for streaming in (False, True):
        client = await ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create_from_url(url)
        for text in ("hello there", "say hi", "what is a cat?"):
            message = Message(message_id="m", role=Role.ROLE_USER, parts=[Part(text=text)])
            try:
                async for event in client.send_message(SendMessageRequest(message=message)):
                    got.append(_without_ids(json_format.MessageToDict(event)))
            except A2AError as error:
                got.append((type(error).__name__, str(error)))
    return got


def _without_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _without_ids(item)
            for key, item in value.items()
            if key not in ("id", "taskId", "contextId", "messageId", "artifactId", "timestamp")
        }
    if isinstance(value, list):
        return [_without_ids(item) for item in value]
    return value


def run[T](use: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(use())


def test_a_recording_becomes_mock_servers_and_agents_the_sdks_get_the_same_answers_from(tmp_path: Path) -> None:
    originals = tmp_path / "originals.json"
    originals.write_text(json.dumps({"mcpServers": MCP_WORKED["mcpServers"], "a2aAgents": A2A_WORKED["a2aAgents"]}))
    cassette = tmp_path / "run.json"
    listening = Listening(ca_directory=tmp_path / "ca")
    with mocking(originals, listening) as real, recording(cassette, listening, record_hosts=["127.0.0.1"]) as proxy:

        async def through_the_proxy() -> tuple[list[Any], list[Any]]:
            async with (
                httpx2.AsyncClient(proxy=proxy.url, trust_env=False) as mcp_http,
                Client(streamable_http_client(f"{real.base_url}/mcp/weather", http_client=mcp_http)) as client,
                httpx.AsyncClient(proxy=proxy.url, trust_env=False) as a2a_http,
            ):
                return await mcp_session(client), await a2a_session(f"{real.base_url}/a2a/translator", a2a_http)

        recorded_mcp, recorded_a2a = run(through_the_proxy)

    converted = CliRunner().invoke(main, ["cassette", "to-expectations", str(cassette), "-o", str(tmp_path / "m.json")])
    assert converted.exit_code == 0, converted.stderr
    assert "1 MCP server, 1 A2A agent" in converted.stderr
    written = json.loads((tmp_path / "m.json").read_text())
    assert [server["path"] for server in written["mcpServers"]] == ["/mcp/weather"]
    assert [agent["path"] for agent in written["a2aAgents"]] == ["/a2a/translator"]

    with mocking(tmp_path / "m.json", Listening(ca_directory=tmp_path / "ca")) as mock:

        async def from_the_mock() -> tuple[list[Any], list[Any]]:
            async with (
                httpx2.AsyncClient(trust_env=False) as mcp_http,
                Client(streamable_http_client(f"{mock.base_url}/mcp/weather", http_client=mcp_http)) as client,
                httpx.AsyncClient(trust_env=False) as a2a_http,
            ):
                return await mcp_session(client), await a2a_session(f"{mock.base_url}/a2a/translator", a2a_http)

        mocked_mcp, mocked_a2a = run(from_the_mock)
    assert mocked_mcp == recorded_mcp
    assert mocked_a2a == recorded_a2a
