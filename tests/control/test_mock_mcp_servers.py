"""The mock's MCP servers over the control API, on a real running mock: listed with their tools, resources,
prompts and the calls each tool has had (an official `mcp` SDK client calling them over Streamable HTTP), by
the full and the read-only token, from the Python client and as the control plane's `list_mock_tools`, and as
docs/control.md shows them; and a server added over the API that cannot be served beside the others is a 400
naming why, nothing of it added."""

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from llmproxy.control.client import Client as ControlClient
from llmproxy.control.client import ControlError
from llmproxy.environment import CONTROL_READ_ONLY_TOKEN_VARIABLE
from llmproxy.session import Session
from tests.control.test_api import call
from tests.control.test_mcp_http import connected
from tests.control.test_page import PAGE
from tests.mock.sdk_clients import serving
from tests.test_session_page import BLOCK

WEATHER: dict[str, Any] = {
    "name": "weather",
    "title": "Weather",
    "tools": [
        {
            "name": "get_forecast",
            "description": "Tomorrow's forecast for a city",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            "results": [{"match": {"arguments": {"city": "Paris"}}, "text": "Sunny."}, {"text": "Rain."}],
        },
        {"name": "refresh", "results": [{"text": "done"}]},
    ],
    "resources": [{"uri": "file:///cities.txt", "name": "cities", "mimeType": "text/plain", "text": "Paris"}],
    "resourceTemplates": [{"uriTemplate": "weather://{city}/today", "name": "today", "text": "{city}: mild"}],
    "prompts": [
        {
            "name": "plan_trip",
            "arguments": [{"name": "city", "required": True}],
            "messages": [{"role": "user", "content": {"type": "text", "text": "Plan a day in {city}."}}],
        }
    ],
}
FILE: dict[str, Any] = {
    "expectations": [{"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris."}}],
    "mcpServers": [WEATHER, {"name": "docs", "url": "https://mcp.example.com/mcp", "tools": []}],
}


@pytest.fixture
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, FILE)


def forecast(proxy: Session, *cities: str) -> list[str]:
    """Each city's forecast, asked by the official SDK's client of the weather server at the mock's base URL."""

    async def run() -> list[str]:
        async with (
            httpx2.AsyncClient(trust_env=False) as http,
            Client(streamable_http_client(f"{proxy.base_url}/mcp/weather", http_client=http)) as client,
        ):
            answers = [await client.call_tool("get_forecast", {"city": city}) for city in cities]
        return [answer.content[0].text for answer in answers]  # type: ignore[union-attr]

    return asyncio.run(run())


def added(name: str, **where: str) -> dict[str, Any]:
    return {"mcpServers": [{"name": name, **where, "tools": [{"name": "ping_back", "results": [{"text": "pong"}]}]}]}


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            added("late", path="/mcp/weather"),
            "mcpServers: late: its path /mcp/weather is MCP server weather's already (give it another path, or the "
            "name weather to replace that server)",
        ),
        (
            added("late", url="https://mcp.example.com/mcp"),
            "mcpServers: late: its url https://mcp.example.com/mcp is MCP server docs's already",
        ),
    ],
)
def test_a_server_added_in_the_place_of_another_is_a_400_naming_it(proxy: Session, body: Any, said: str) -> None:
    status, answer, _ = call(proxy, "POST", "/expectations", body)
    assert status == 400, answer
    assert answer["error"].startswith(said), answer["error"]
    assert "\n" not in answer["error"]
    status, answer, _ = call(proxy, "POST", "/load", {"inline": body})
    assert (status, answer["error"][: len(said)]) == (400, said)
    listed = call(proxy, "GET", "/mcp-servers", token="read-only")[1]["servers"]
    assert [server["name"] for server in listed] == ["weather", "docs"]  # nothing of it was added
    assert [tool["name"] for tool in listed[0]["tools"]] == ["get_forecast", "refresh"]


def test_a_file_of_mcp_servers_alone_loads_by_its_path(proxy: Session, tmp_path: Any) -> None:
    path = tmp_path / "servers.json"
    path.write_text('{"mcpServers": [{"name": "late", "tools": [{"name": "ping_back", "results": [{"text": "p"}]}]}]}')
    status, answer, _ = call(proxy, "POST", "/load", {"path": str(path)})
    assert (status, answer) == (200, {"kind": "expectations", "files": [str(path)], "added": []})
    listed = call(proxy, "GET", "/mcp-servers")[1]["servers"]
    assert [server["name"] for server in listed] == ["weather", "docs", "late"]


def test_each_server_is_listed_with_where_it_is_served_and_what_it_offers(proxy: Session) -> None:
    assert forecast(proxy, "Paris", "Oslo", "Paris") == ["Sunny.", "Rain.", "Sunny."]
    status, answer, _ = call(proxy, "GET", "/mcp-servers", token="read-only")
    assert status == 200
    weather, docs = answer["servers"]
    assert (weather["name"], weather["title"], weather["path"]) == ("weather", "Weather", "/mcp/weather")
    assert weather["mockUrl"] == f"{proxy.base_url}/mcp/weather"
    assert "url" not in weather
    assert (docs["path"], docs["url"], docs["tools"]) == ("/mcp/docs", "https://mcp.example.com/mcp", [])
    forecast_tool, refresh = weather["tools"]
    assert forecast_tool == {
        "name": "get_forecast",
        "description": "Tomorrow's forecast for a city",
        "inputSchema": WEATHER["tools"][0]["inputSchema"],
        "calls": 3,
        "served": [2, 1],
    }
    assert (refresh["name"], refresh["inputSchema"], refresh["calls"], refresh["served"]) == (
        "refresh",
        {"type": "object"},
        0,
        [0],
    )
    assert weather["resources"] == [{"uri": "file:///cities.txt", "name": "cities", "mimeType": "text/plain"}]
    assert weather["resourceTemplates"] == [{"uriTemplate": "weather://{city}/today", "name": "today"}]
    assert weather["prompts"] == [{"name": "plan_trip", "arguments": [{"name": "city", "required": True}]}]
    assert weather["openSessions"] == 0  # the SDK's client ended its session as it closed (DELETE)


def test_the_python_client_reads_them_and_a_run_without_mcp_servers_lists_none(
    proxy: Session, tmp_path_factory: pytest.TempPathFactory
) -> None:
    forecast(proxy, "Oslo")
    control = ControlClient.from_environment(proxy.environment)
    weather, docs = control.mcp_servers().servers
    assert (weather.name, docs.name) == ("weather", "docs")
    assert [(tool.name, tool.calls) for tool in weather.tools] == [("get_forecast", 1), ("refresh", 0)]
    assert weather.tools[0].input_schema["required"] == ["city"]
    for plain in serving(tmp_path_factory, {"expectations": []}):
        assert ControlClient.from_environment(plain.environment).mcp_servers().servers == []


def test_without_a_token_it_is_refused(proxy: Session) -> None:
    status, _, _ = call(proxy, "GET", "/mcp-servers", token=None)
    assert status == 401
    with pytest.raises(ControlError) as refused:
        ControlClient(proxy.control_url, "wrong").mcp_servers()
    assert refused.value.status == 401


def test_list_mock_tools_reads_them_over_mcp_with_the_read_only_token(proxy: Session) -> None:
    forecast(proxy, "Paris")

    async def use(client: Client) -> Any:
        return await client.call_tool("list_mock_tools", {})

    listed = connected(proxy, proxy.environment[CONTROL_READ_ONLY_TOKEN_VARIABLE], use)
    assert not listed.is_error, listed.content
    assert listed.structured_content == call(proxy, "GET", "/mcp-servers")[1]
    weather = listed.structured_content["servers"][0]
    assert [(tool["name"], tool["calls"], tool["served"]) for tool in weather["tools"]] == [
        ("get_forecast", 1, [1, 0]),
        ("refresh", 0, [0]),
    ]


def test_the_pages_example_is_listed_as_the_page_shows(tmp_path_factory: pytest.TempPathFactory) -> None:
    section = PAGE.read_text().split("\n## Mock MCP servers\n", 1)[1].split("\n## ", 1)[0]
    body, shown = (json.loads(code) for _, language, code in BLOCK.findall(section) if language == "json")
    for plain in serving(tmp_path_factory, {"expectations": []}):
        assert call(plain, "POST", "/expectations", body)[:2] == (200, {"added": []})
        assert forecast(plain, "Oslo") == ["Rain."]
        status, answer, _ = call(plain, "GET", "/mcp-servers")
        assert status == 200
        (server,) = answer["servers"]
        assert server["mockUrl"] == f"{plain.base_url}/mcp/weather"
        assert answer == shown | {"servers": [shown["servers"][0] | {"mockUrl": server["mockUrl"]}]}


@pytest.mark.parametrize(("method", "path"), [("POST", "/reset"), ("DELETE", "/expectations")])
def test_starting_afresh_removes_the_mcp_servers_with_every_other_expectation(
    proxy: Session, method: str, path: str
) -> None:
    status, answer, _ = call(proxy, method, path)
    assert status == 200, answer
    assert call(proxy, "GET", "/mcp-servers")[1]["servers"] == []
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    with httpx2.Client(trust_env=False) as http:
        answer = http.post(f"{proxy.base_url}/mcp/weather", json=initialize)
    # a miss: nothing serves the path any more, said as a JSON-RPC error an MCP client reads (not a lost session)
    assert answer.status_code == 200, answer.text
    assert answer.json()["error"]["code"] == -32001
    assert "no expectation answers this request" in answer.json()["error"]["message"]
    status, answer, _ = call(proxy, "POST", "/expectations", {"mcpServers": [WEATHER]})
    assert status == 200, answer
    assert forecast(proxy, "Paris") == ["Sunny."]  # its path is free again, its counts afresh
    assert call(proxy, "GET", "/mcp-servers")[1]["servers"][0]["tools"][0]["calls"] == 1
