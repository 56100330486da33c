"""The MCP Inspector's CLI mode (`@modelcontextprotocol/inspector`, pinned in package.json) checks llmproxy's MCP
server as a user would: over stdio it lists every tool (their schemas free of portability errors, `--strict`)
and calls one with arguments; over Streamable HTTP, on a running mock's control port with its token, it calls
one that reads the running mock."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmproxy.control.mcp.stdio import api_tools
from llmproxy.environment import CONTROL_TOKEN_VARIABLE
from llmproxy.session import Session
from tests.mock.sdk_clients import serving

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / "node_modules" / ".bin" / "mcp-inspector"
EXPECTATIONS = {"expectations": [{"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris."}}]}

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not INSPECTOR.exists(), reason="the MCP Inspector is not installed: scripts/setup.sh installs it (needs npm)"
    ),
]


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, EXPECTATIONS)


def inspect(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`mcp-inspector --cli ARGUMENTS…` in a fresh home, offline."""
    (tmp_path / "home").mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "LLMPROXY_HOME": str(tmp_path / "llmproxy")}
    return subprocess.run(
        [str(INSPECTOR), "--cli", *arguments],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def answered(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_over_stdio_it_lists_every_tool_and_calls_one(tmp_path: Path) -> None:
    path = tmp_path / "expectations.json"
    path.write_text(json.dumps(EXPECTATIONS))
    server = [sys.executable, "-m", "llmproxy", "mcp", "--mock", str(path)]

    listed = inspect(tmp_path, "--strict", *server, "--method", "tools/list")
    assert [tool["name"] for tool in answered(listed)["tools"]] == [tool.name for tool in api_tools()]
    assert "0 errors" in listed.stderr  # every input schema is portable

    call = ["--method", "tools/call", "--tool-name", "retrieve_active_expectations"]
    result = answered(inspect(tmp_path, *server, *call))
    assert result["isError"] is False
    (expectation,) = result["structuredContent"]["expectations"]
    assert expectation["definition"]["respond"]["text"] == "Paris."


def test_over_http_it_calls_a_tool_of_a_running_mock(running: Session, tmp_path: Path) -> None:
    url = running.control_api_url.replace("/llmproxy/api/v1", "/llmproxy/mcp")
    token = f"Authorization: Bearer {running.environment[CONTROL_TOKEN_VARIABLE]}"
    call = ["--method", "tools/call", "--tool-name", "get_status"]
    result = answered(inspect(tmp_path, url, "--transport", "http", "--header", token, *call))
    assert result["isError"] is False
    assert result["structuredContent"]["proxyUrl"] == running.url
