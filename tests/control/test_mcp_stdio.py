"""`llmproxy mcp` over stdio, driven by the official `mcp` SDK's client as an MCP host runs it: on a mock it
starts itself it lists every tool and calls each; attached to a running llmproxy (its URL and token from the
environment, or flags) it drives that one, the read-only token only reading; stdout carries JSON-RPC and
nothing else, and the control tokens never reach stderr; a command line that cannot work is one line."""

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from llmproxy.control.mcp.stdio import api_tools
from llmproxy.environment import CONTROL_READ_ONLY_TOKEN_VARIABLE, CONTROL_TOKEN_VARIABLE, CONTROL_URL_VARIABLE
from llmproxy.session import Session
from tests.control.mcp_calls import exercise
from tests.mock.sdk_clients import serving

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

CLIENT = {"name": "a test", "version": "1"}
ROOT = Path(__file__).resolve().parents[2]
EXPECTATIONS = {"expectations": [{"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris."}}]}


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, EXPECTATIONS)


def environment(home: Path, **variables: str) -> dict[str, str]:
    """What the MCP server is started with: no proxy or control variable but those given."""
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LLMPROXY_HOME": str(home / "llmproxy")} | variables


def served[T](args: list[str], env: dict[str, str], use: Callable[[Client], Awaitable[T]], errlog: Path) -> T:
    """`use` run with the SDK's client of `llmproxy mcp ARGS…` (its stderr written to `errlog`)."""

    async def run() -> T:
        parameters = StdioServerParameters(command=sys.executable, args=["-m", "llmproxy", "mcp", *args], env=env)
        with errlog.open("w") as stderr:
            async with Client(stdio_client(parameters, errlog=stderr)) as client:
                return await use(client)

    return asyncio.run(run())


def test_on_a_mock_of_its_own_the_sdk_lists_every_tool_and_calls_each(tmp_path: Path) -> None:
    path = tmp_path / "expectations.json"
    path.write_text(json.dumps(EXPECTATIONS))

    async def use(client: Client) -> tuple[list[str], list[str]]:
        listed = await client.list_tools()
        return [tool.name for tool in listed.tools], await exercise(client)

    listed, called = served(["--mock", str(path)], environment(tmp_path), use, tmp_path / "stderr")
    assert listed == [tool.name for tool in api_tools()]
    assert set(called) == set(listed)
    said = (tmp_path / "stderr").read_text()
    assert "llmproxy mcp: proxy on http://127.0.0.1:" in said
    assert "export HTTPS_PROXY=" in said
    assert "LLMPROXY_CONTROL_TOKEN" not in said  # stderr may be an MCP host's log file
    assert re.search(r"llmproxy mcp: mock answered (\d+) of \1 requests", said), said  # the MCP server's too
    assert "1. openai gpt-4o-mini (turn index 0): expectation 2" in said
    assert "POST 127.0.0.1/mcp/weather: mcp server weather: tools/call get_forecast → result 1" in said


def test_without_a_file_it_starts_an_empty_mock_the_tools_fill(tmp_path: Path) -> None:
    async def use(client: Client) -> tuple[Any, Any]:
        added = await client.call_tool("mock_llm_completion", {"respond": {"text": "Hi."}})
        return added.structured_content, (await client.call_tool("get_status", {})).structured_content

    added, status = served([], environment(tmp_path), use, tmp_path / "stderr")
    assert added == {"added": [1]}
    assert (status["mode"], status["describe"]) == ("mock", "mocking with no expectations")


def test_replay_twice_serves_both_cassettes(tmp_path: Path) -> None:
    cassettes = [ROOT / "cassettes" / "quickstart.json", ROOT / "cassettes" / "chaos" / "recovered.json"]
    arguments = [word for cassette in cassettes for word in ("--replay", str(cassette))]

    async def use(client: Client) -> Any:
        return (await client.call_tool("get_status", {})).structured_content

    status = served(arguments, environment(tmp_path), use, tmp_path / "stderr")
    assert (status["mode"], status["describe"]) == ("replay", f"none mode, replaying {cassettes[0]}, {cassettes[1]}")


def test_attached_it_drives_the_running_llmproxy(running: Session, tmp_path: Path) -> None:
    variables = {
        CONTROL_URL_VARIABLE: running.environment[CONTROL_URL_VARIABLE],
        CONTROL_TOKEN_VARIABLE: running.environment[CONTROL_TOKEN_VARIABLE],
    }

    async def use(client: Client) -> Any:
        added = await client.call_tool("create_expectation", {"expectations": [{"respond": {"text": "attached"}}]})
        assert not added.is_error
        return (await client.call_tool("get_status", {})).structured_content

    status = served(["--attach"], environment(tmp_path, **variables), use, tmp_path / "stderr")
    assert status["proxyUrl"] == running.url  # the running proxy's, not one of its own
    assert running.mock is not None
    assert running.mock.state.value[0] is not None
    assert [entry.definition.model_dump(exclude_unset=True) for entry in running.mock.state.value[0].standing()][
        -1
    ] == {"respond": {"text": "attached"}}


def test_attached_with_the_read_only_token_it_only_reads(running: Session, tmp_path: Path) -> None:
    flags = [
        "--attach",
        "--control-url",
        running.control_url,
        "--control-token",
        running.environment[CONTROL_READ_ONLY_TOKEN_VARIABLE],
    ]

    async def use(client: Client) -> tuple[Any, Any]:
        return await client.call_tool("get_status", {}), await client.call_tool("clear_expectations", {})

    status, cleared = served(flags, environment(tmp_path), use, tmp_path / "stderr")
    assert not status.is_error
    assert cleared.is_error
    assert cleared.content[0].text.startswith("403: DELETE /llmproxy/api/v1/expectations changes the run")


def test_stdout_carries_json_rpc_and_nothing_else(tmp_path: Path) -> None:
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_status", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nope", "arguments": {}}},
    ]
    with subprocess.Popen(
        [sys.executable, "-m", "llmproxy", "mcp", "-v"],
        env=environment(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        assert server.stderr is not None
        watchdog = threading.Timer(120, server.kill)  # a server that stops answering fails the test, not hangs it
        watchdog.start()
        lines = []
        for message in messages:  # as a client does: the next request once the last one is answered
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
            if "id" in message:
                lines.append(server.stdout.readline())
        server.stdin.close()
        lines += server.stdout.readlines()  # nothing more, if all is well
        stderr = server.stderr.read()
        watchdog.cancel()
    assert server.returncode == 0, stderr[-3000:]
    answers = [json.loads(line) for line in lines]  # each line is JSON
    assert [answer["id"] for answer in answers] == [1, 2, 3, 4]
    assert all(answer["jsonrpc"] == "2.0" for answer in answers)
    assert answers[2]["result"]["structuredContent"]["mode"] == "mock"
    assert answers[3]["error"]["code"] == -32602
    assert "llmproxy mcp: proxy on" in stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--attach"], "--attach needs the running llmproxy's control URL and token"),
        (["--attach", "--mock", "e.json"], "--attach drives a running llmproxy: it takes no --mock"),
        (["--control-token", "t"], "--control-url and --control-token go with --attach"),
        (["--record", "c.json", "--replay", "d.json"], "--record records the network: it takes no --mock or --replay"),
    ],
)
def test_a_command_line_that_cannot_work_is_one_line(tmp_path: Path, args: list[str], said: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "llmproxy", "mcp", *args],
        env=environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert said in line
