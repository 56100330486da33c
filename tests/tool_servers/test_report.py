"""`llmproxy report` and `explain` count the MCP tool calls of a run beside its model calls: an agent's loop
recorded for real — the Anthropic SDK asks the model (llmproxy's mock), which calls an MCP tool; the `mcp` SDK
calls it (a mock MCP server), and the oversized result goes back to the model — then reported."""

import asyncio
import json
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import jsonschema
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from llmproxy.cli import main
from llmproxy.session import Listening, mocking, recording

BIG = "Paris will be sunny. " * 400  # ~2,000 tokens: an oversized tool result
AGENT = {
    "expectations": [
        {"conversation": {"turns": [
            {"respond": {"toolCalls": [{"name": "mcp__weather__get_forecast", "arguments": {"city": "Paris"}}]}},
            {"match": {"containsToolResultFor": "mcp__weather__get_forecast"}, "respond": {"text": "Sunny."}},
        ]}}
    ],
    "mcpServers": [
        {"name": "weather", "tools": [{
            "name": "get_forecast",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
            "results": [
                {"match": {"arguments": {"city": "Paris"}}, "text": BIG},
                {"isError": True, "text": "No forecast there."},
            ],
        }]}
    ],
}  # fmt: skip
ROOT = Path(__file__).resolve().parents[2]
TOOL = {"name": "mcp__weather__get_forecast", "input_schema": {"type": "object"}}


async def _call_tools(proxy_url: str, base_url: str) -> str:
    async with (
        httpx2.AsyncClient(proxy=proxy_url, trust_env=False) as http,
        Client(streamable_http_client(f"{base_url}/mcp/weather", http_client=http)) as client,
    ):
        await client.call_tool("get_forecast", {"city": "Oslo"})
        result = await client.call_tool("get_forecast", {"city": "Paris"})
    return str(result.content[0].text)  # type: ignore[union-attr]


def validate(document: Any, command: str) -> None:
    schema = json.loads((ROOT / "docs" / "json" / f"{command}.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(document)


@pytest.fixture(scope="module")
def run_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One recorded agent loop: a model call that asks for the tool, two MCP calls, the model call that sends
    the tool's result back."""
    folder = tmp_path_factory.mktemp("mcp-report")
    (folder / "agent.json").write_text(json.dumps(AGENT))
    cassette = folder / "run.json"
    listening = Listening(ca_directory=folder / "ca")
    with (
        mocking(folder / "agent.json", listening) as real,
        recording(cassette, listening) as proxy,
        httpx2.Client(proxy=proxy.url, trust_env=False) as http,
        anthropic.Anthropic(api_key="sk-ant-test", base_url=real.base_url, http_client=http, max_retries=0) as model,
    ):
        ask: dict[str, Any] = {"model": "claude-haiku-4-5", "max_tokens": 100, "tools": [TOOL]}
        history: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        first = model.messages.create(messages=history, **ask)
        use = next(block for block in first.content if block.type == "tool_use")
        text = asyncio.run(_call_tools(proxy.url, real.base_url))
        history += [
            {"role": "assistant", "content": [block.model_dump() for block in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": text}]},
        ]
        model.messages.create(messages=history, **ask)
    return cassette


def test_report_counts_each_mcp_tool_and_names_it_in_the_oversized_result_signal(run_file: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(run_file), "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    validate(report, "report")
    assert report["totals"]["callCount"] == 2
    [row] = report["mcpTools"]
    assert (row["server"], row["tool"], row["calls"], row["errors"]) == ("weather", "get_forecast", 2, 1)
    assert (row["resultBytes"], row["largestResultBytes"]) == (8_527, 8_455)  # the error's, and BIG's as JSON
    assert row["totalLatencyMs"] > 0
    [oversized] = [signal for signal in report["signals"] if signal["id"] == "OVERSIZED_TOOL_RESULT"]
    assert oversized["mcpTools"] == [{"server": "weather", "tool": "get_forecast"}]
    # as docs/report.md quotes it
    assert oversized["detail"].endswith(
        "They came from tool get_forecast of MCP server weather (its largest result 8,455 bytes)."
    )


def test_the_terminal_and_markdown_reports_and_explain_list_the_mcp_tools(run_file: Path) -> None:
    markdown = CliRunner().invoke(main, ["report", "--format", "markdown", str(run_file)]).stdout
    assert "## MCP tool calls" in markdown
    assert "| weather | get_forecast | 2 | 1 |" in markdown
    terminal = CliRunner().invoke(main, ["report", "--format", "terminal", str(run_file)]).stdout
    assert "MCP tool calls" in terminal
    html = CliRunner().invoke(main, ["report", "--format", "html", str(run_file)]).stdout
    assert '<table data-testid="mcp-tools">' in html
    assert "<td>weather</td><td>get_forecast</td>" in html
    explained_text = CliRunner().invoke(main, ["explain", str(run_file)]).stdout
    assert "MCP tool calls (2 calls):" in explained_text
    assert "weather · get_forecast: 2 calls, 1 error," in explained_text
    assert "ms each, 8,527 bytes of results" in explained_text  # as docs/report.md quotes it
    explained = json.loads(CliRunner().invoke(main, ["explain", "--json", str(run_file)]).stdout)
    validate(explained, "explain")
    assert [(row["server"], row["tool"], row["calls"]) for row in explained["mcpTools"]] == [
        ("weather", "get_forecast", 2)
    ]
