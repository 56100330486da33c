"""The mock's MCP servers over the control API, on a real running mock: a server added over the API that
cannot be served beside the others is a 400 naming why, nothing of it added; a file of servers alone loads
by its path."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmproxy.session import Session
from tests.control.test_api import call
from tests.mock.sdk_clients import serving

FILE: dict[str, Any] = {
    "expectations": [{"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris."}}],
    "mcpServers": [
        {"name": "weather", "tools": [{"name": "refresh", "results": [{"text": "done"}]}]},
        {"name": "docs", "url": "https://mcp.example.com/mcp", "tools": []},
    ],
}


@pytest.fixture
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, FILE)


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


def test_a_file_of_mcp_servers_alone_loads_by_its_path(proxy: Session, tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text('{"mcpServers": [{"name": "late", "tools": [{"name": "ping_back", "results": [{"text": "p"}]}]}]}')
    status, answer, _ = call(proxy, "POST", "/load", {"path": str(path)})
    assert (status, answer) == (200, {"kind": "expectations", "files": [str(path)], "added": []})
