"""The worked example of docs/mcp.md — the file itself, taken from the page — and what the page says an MCP
client gets from it, asserted through the official `mcp` SDK's client: the same checks over Streamable HTTP
(base URL and through the proxy under the real host) and over stdio."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference, ResourceTemplateReference, TextContent, TextResourceContents

ROOT = Path(__file__).resolve().parents[3]
PAGE = (ROOT / "docs" / "mcp.md").read_text()
BLOCKS = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", PAGE, re.DOTALL)]
FILES = [block for block in BLOCKS if isinstance(block.get("mcpServers"), list)]  # not a client's .mcp.json
WORKED: dict[str, Any] = FILES[0]


def write_worked(folder: Path) -> Path:
    path = folder / "agent.json"
    path.write_text(json.dumps(WORKED))
    return path


def text(result: Any) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


async def check_worked(client: Client) -> None:
    """Every promise the page makes of the worked example, in order (the tools' state advances)."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == ["get_forecast", "refresh"]
    forecast = tools["get_forecast"]
    assert forecast.input_schema["required"] == ["city"]
    assert forecast.output_schema is not None
    assert forecast.output_schema["required"] == ["city", "celsius"]
    assert forecast.title == "Forecast"
    assert forecast.annotations is not None
    assert forecast.annotations.read_only_hint

    paris = await client.call_tool("get_forecast", {"city": "Paris"})
    assert paris.structured_content == {"city": "Paris", "celsius": 21, "sky": "sunny"}
    assert json.loads(text(paris)) == paris.structured_content
    assert not paris.is_error

    oslo = await client.call_tool("get_forecast", {"city": "OSLO"})
    assert oslo.is_error
    assert text(oslo) == "No forecast for Oslo."

    rome = await client.call_tool("get_forecast", {"city": "Rome"})
    assert rome.structured_content == {"city": "elsewhere", "celsius": 12, "sky": "rain"}
    with pytest.raises(MCPError) as down:  # the sequence's second answer: a JSON-RPC error
        await client.call_tool("get_forecast", {"city": "Rome"})
    assert (down.value.code, down.value.error.message) == (-32603, "the forecast service is down")
    again = await client.call_tool("get_forecast", {"city": "Bergen"})  # onExhausted: loop
    assert again.structured_content is not None
    assert again.structured_content["sky"] == "rain"

    cities = (await client.read_resource("file:///cities.txt")).contents
    assert [(c.uri, c.mime_type, getattr(c, "text", None)) for c in cities] == [
        ("file:///cities.txt", "text/plain", "Paris\nOslo\nRome")
    ]
    (today,) = (await client.read_resource("weather://Rome/today")).contents
    assert isinstance(today, TextResourceContents)
    assert json.loads(today.text) == {"city": "Rome", "celsius": 18}
    templates = (await client.list_resource_templates()).resource_templates
    assert [template.uri_template for template in templates] == ["weather://{city}/today"]
    completed = await client.complete(
        ResourceTemplateReference(uri="weather://{city}/today"), {"name": "city", "value": "P"}
    )
    assert completed.completion.values == ["Paris", "Porto"]

    prompt = await client.get_prompt("plan_trip", {"city": "Rome", "mood": "slow"})
    (message,) = prompt.messages
    assert message.role == "user"
    assert isinstance(message.content, TextContent)
    assert message.content.text == "Plan a slow day in Rome, given the forecast."
    offered = await client.complete(PromptReference(name="plan_trip"), {"name": "city", "value": "po"})
    assert offered.completion.values == ["Porto"]
