"""Every MCP tool called once, in an order that gives each something to work on, by the official `mcp` SDK's
client — over stdio or Streamable HTTP, the same calls: expectations added with each tool that adds them (a
mock MCP server among them), a request sent through the mock by the official OpenAI SDK (at the base URL
`get_status` names), the journal read, verified and cleared, chaos set and removed, the mock MCP server called
by the SDK's client and listed with its calls, the run reset. Each answer is checked for what it says, not only
for not failing; the test asserts every tool listed was called."""

import json
import tempfile
from pathlib import Path
from typing import Any

import httpx2
import openai
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from llmproxy.control.mcp.tools import ChaosSet


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """A tool's answer, which must not be a tool error: its structured content, equal to its text's JSON."""
    result: CallToolResult = await client.call_tool(name, arguments or {})
    assert not result.is_error, f"{name}: {result.content}"
    (content,) = result.content
    assert content.type == "text"
    answer = json.loads(content.text)
    assert result.structured_content == answer
    assert isinstance(answer, dict)
    return answer


async def text(client: Client, name: str, arguments: dict[str, Any] | None = None) -> str:
    """A tool's answer that is a rendered document (a report, a timeline), which must not be a tool error."""
    result: CallToolResult = await client.call_tool(name, arguments or {})
    assert not result.is_error, f"{name}: {result.content}"
    (content,) = result.content
    assert content.type == "text"
    return content.text


async def exercise(client: Client) -> list[str]:
    """Call every tool once, checking each answer; the names called, in order."""
    called: list[str] = []

    async def use(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        called.append(name)
        return await call(client, name, arguments)

    async def read(name: str, arguments: dict[str, Any] | None = None) -> str:
        called.append(name)
        return await text(client, name, arguments)

    status = await use("get_status")
    assert status["mode"] == "mock"
    base_url = status["baseUrl"]

    weather = await use(
        "mock_llm_completion", {"match": {"latestMessageContains": "weather"}, "respond": {"text": "Sunny."}}
    )
    conversation = await use(
        "create_llm_conversation",
        {"match": {"model": "gpt-chat"}, "turns": [{"respond": {"text": "one"}}, {"respond": {"text": "two"}}]},
    )
    hostile = await use(
        "mock_adversarial_llm_response", {"match": {"model": "gpt-hostile"}, "payload": "empty_response"}
    )
    scoped = await use(
        "create_expectation",
        {"expectations": [{"match": {"model": "gpt-scoped"}, "respond": {"text": "scoped"}}], "testId": "test-7"},
    )
    weather_server = {"name": "weather", "tools": [{"name": "get_forecast", "results": [{"text": "Sunny."}]}]}
    loaded = await use(
        "load_expectations_from_file",
        {
            "inline": {
                "expectations": [{"match": {"model": "gpt-loaded"}, "respond": {"text": "loaded"}}],
                "mcpServers": [weather_server],
                "a2aAgents": [{"name": "helper", "replies": [{"message": "On it."}]}],
            }
        },
    )
    assert loaded["kind"] == "expectations"
    added = [*weather["added"], *conversation["added"], *hostile["added"], *scoped["added"], *loaded["added"]]
    assert len(set(added)) == 5
    listed = await use("retrieve_active_expectations")
    assert added == [entry["id"] for entry in listed["expectations"]][-5:]
    assert listed["expectations"][-2]["testId"] == "test-7"

    with openai.OpenAI(base_url=f"{base_url}/v1", api_key="sk-test", max_retries=0) as sdk:
        ask = [{"role": "user", "content": "How is the weather?"}]
        answer = sdk.chat.completions.create(model="gpt-4o-mini", messages=ask)  # type: ignore[arg-type]
        assert answer.choices[0].message.content == "Sunny."
        second = sdk.chat.completions.create(model="gpt-chat", messages=[{"role": "user", "content": "hi"}])
        assert second.choices[0].message.content == "one"

    journal = await use("retrieve_recorded_requests", {"source": "mocked", "limit": 10})
    assert [entry["model"] for entry in journal["entries"]] == ["gpt-4o-mini", "gpt-chat"]
    first = journal["entries"][0]["seq"]
    whole = await use("retrieve_request_responses", {"seq": first})
    assert "How is the weather?" in json.dumps(whole["exchange"]["request"])
    verified = await use("verify_request", {"match": {"latestMessageContains": "weather"}, "exactly": 1})
    assert (verified["ok"], verified["matched"]) == (True, [first])
    ordered = await use(
        "verify_request_sequence", {"sequence": [{"latestMessageContains": "weather"}, {"model": "gpt-chat"}]}
    )
    assert ordered["ok"]
    tool = await use("verify_tool_call", {"name": "get_weather"})
    assert (tool["ok"], tool["toolsCalled"]) == (False, {})  # the answers were text: no tool was called
    shaped = await use("verify_structured_output", {"schema": {"type": "object"}})
    assert not shaped["ok"]  # "Sunny." is not JSON
    budget = await use("verify_cost_budget", {"maxUsd": "1", "allowUnpriced": True})
    assert budget["ok"], budget
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder) / "empty.json"
        empty.write_text('{"llmproxy_cassette": 1, "exchanges": []}')
        drift = await use("detect_llm_drift", {"cassette": str(empty), "live": True})
        assert (drift["outcome"], drift["reasons"]) == ("could_not_check", ["no chat exchange to check"])
    assert (await use("explain_unmatched_requests"))["misses"] == []
    chat = {"model": "gpt-chat", "messages": [{"role": "user", "content": "hi"}]}
    debugged = await use("debug_request_mismatch", {"url": f"{base_url}/v1/chat/completions", "body": chat})
    assert debugged["answeredBy"] is not None
    report = json.loads(await read("export_optimisation_report", {"format": "json"}))
    assert isinstance(report, dict)
    timeline = await read("explain_agent_run", {"format": "timeline"})
    assert "gpt-4o-mini" in timeline

    assert (await use("remove_expectation", {"id": weather["added"][0]}))["removed"] == weather["added"][0]
    assert (await use("clear_expectations", {"testId": "test-7"}))["cleared"] == 1

    host = "api.example.com"
    profile = ChaosSet.model_validate({"host": host, "chaos": {"errorStatus": 503}})
    assert (await use("set_chaos", profile.model_dump(exclude_unset=True)))["status"] == "registered"
    patched = await use("patch_chaos", {"host": host, "chaos": {"errorStatus": 529}})
    assert patched["chaos"]["errorStatus"] == 529
    assert (await use("get_chaos"))["services"] == {host: {"errorStatus": 529}}
    assert (await use("remove_chaos", {"host": host}))["status"] == "removed"
    assert (await use("clear_chaos"))["status"] == "cleared"

    with tempfile.TemporaryDirectory() as folder:
        saved = await use("record_llm_fixtures", {"path": str(Path(folder) / "saved.json")})
        assert saved["exchanges"] == 2
        assert "How is the weather?" in (Path(folder) / "saved.json").read_text()

    assert (await use("clear_journal"))["cleared"] == 2

    async with (
        httpx2.AsyncClient(trust_env=False) as http,
        Client(streamable_http_client(f"{base_url}/mcp/weather", http_client=http)) as weather,
    ):
        forecast = await weather.call_tool("get_forecast", {"city": "Paris"})
    assert [getattr(block, "text", None) for block in forecast.content] == ["Sunny."]
    (server,) = (await use("list_mock_tools"))["servers"]
    assert (server["name"], server["mockUrl"]) == ("weather", f"{base_url}/mcp/weather")
    assert [(tool["name"], tool["calls"]) for tool in server["tools"]] == [("get_forecast", 1)]
    (agent,) = (await use("list_mock_agents"))["agents"]
    assert (agent["name"], agent["mockUrl"], agent["served"]) == ("helper", f"{base_url}/a2a/helper", [0])
    reset = await use("reset")
    assert reset["expectations"] >= 2  # the file's, and what is left of those added above
    assert (await use("retrieve_active_expectations"))["expectations"] == []
    assert (await use("stop_server"))["stopping"]  # last: the run ends once this is answered
    return called
