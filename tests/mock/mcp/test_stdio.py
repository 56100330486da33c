"""`llmproxy mcp-serve` over stdio, as an agent's MCP configuration runs it: the official `mcp` SDK's client
gets what docs/mcp.md promises of its worked example; a line that is not JSON, or not JSON-RPC, gets the
protocol's error and the server reads on; stdout carries JSON-RPC only; a command line or file it cannot
serve is one line on stderr."""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.mock.mcp.raw import INITIALIZE
from tests.mock.mcp.worked import check_worked, write_worked


def environment(home: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LLMPROXY_HOME": str(home / "llmproxy")}


def serve(tmp_path: Path, *arguments: str, lines: list[bytes]) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "llmproxy", "mcp-serve", *arguments]
    return subprocess.run(
        command, input=b"".join(lines), capture_output=True, env=environment(tmp_path), timeout=60, check=False
    )


def test_the_sdk_gets_what_the_docs_promise(tmp_path: Path) -> None:
    path = write_worked(tmp_path)
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "llmproxy", "mcp-serve", str(path), "-v"], env=environment(tmp_path)
    )

    async def run() -> None:
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog)) as client:
                await check_worked(client)

    asyncio.run(run())
    said = (tmp_path / "stderr.txt").read_text()
    assert "llmproxy mcp-serve: weather: tools/call get_forecast → result 1" in said
    assert "Traceback" not in said


def test_garbage_gets_the_protocols_errors_and_the_server_reads_on(tmp_path: Path) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}
    lines = [
        json.dumps(initialize).encode() + b"\n",
        b"this is not JSON\n",
        b"\n",
        b'{"id": 2, "method": "ping"}\n',
        b'[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]\n',
        b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "get_forecast", "arguments": {}}}\n',
        b'{"jsonrpc": "2.0", "id": 5, "method": "ping"}\n',
    ]
    done = serve(tmp_path, str(write_worked(tmp_path)), "--server", "weather", lines=lines)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]  # every line of stdout is JSON-RPC
    assert answers[0]["result"]["serverInfo"]["name"] == "weather"
    assert [(answer.get("id"), answer.get("error", {}).get("code")) for answer in answers[1:]] == [
        (None, -32700),
        (2, -32600),
        (None, -32600),  # no batches in 2025-06-18
        (4, -32602),
        (5, None),
    ]
    assert b"a line that is not JSON" in done.stderr
    assert b"Traceback" not in done.stderr


def test_what_it_cannot_serve_is_one_line(tmp_path: Path) -> None:
    worked = str(write_worked(tmp_path))
    unknown = serve(tmp_path, worked, "--server", "radio", lines=[])
    assert (unknown.returncode, unknown.stdout) == (2, b"")
    assert unknown.stderr.decode() == f"llmproxy mcp-serve: error: {worked} has no MCP server 'radio': it has weather\n"
    bare = tmp_path / "bare.json"
    bare.write_text('{"expectations": []}')
    nothing = serve(tmp_path, str(bare), lines=[])
    assert nothing.returncode == 1
    assert (
        nothing.stderr.decode() == f"llmproxy mcp-serve: error: {bare}: it has no mcpServers to serve (docs/mcp.md)\n"
    )
    typo = tmp_path / "typo.json"
    typo.write_text('{"mcpServers": [{"name": "x", "tools": [{"name": "t", "results": [{"txt": "hi"}]}]}]}')
    broken = serve(tmp_path, str(typo), lines=[])
    assert broken.returncode == 1
    assert f"{typo}: $.mcpServers[0].tools[0].results[0].txt: Extra inputs are not permitted" in broken.stderr.decode()
