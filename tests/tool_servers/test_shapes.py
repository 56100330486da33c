"""What tells an MCP server's or A2A agent's request apart, whatever host it goes to (`tool_protocols`)."""

from typing import Any

import pytest

from llmproxy.tool_protocols import protocol

RPC = {"jsonrpc": "2.0", "id": 1}
SESSION = {"mcp-session-id": "abc"}


@pytest.mark.parametrize(
    ("method", "path", "headers", "body", "expected"),
    [
        ("POST", "/mcp", {}, {**RPC, "method": "initialize", "params": {}}, "mcp"),
        ("POST", "/mcp", {}, {"jsonrpc": "2.0", "method": "notifications/initialized"}, "mcp"),
        ("POST", "/mcp", {}, [{**RPC, "method": "tools/list"}], "mcp"),  # a batch
        ("GET", "/mcp", SESSION, None, "mcp"),  # the session's stream
        ("DELETE", "/mcp", SESSION, None, "mcp"),  # its end
        ("POST", "/mcp", SESSION, {**RPC, "result": {}}, "mcp"),  # the client answering the server
        ("POST", "/mcp", SESSION, {**RPC, "method": "tasks/get"}, "mcp"),  # MCP's tasks, by its header
        ("POST", "/a2a", {}, {**RPC, "method": "tasks/get"}, "a2a"),  # else A2A 0.3's
        ("POST", "/a2a", {}, {**RPC, "method": "SendMessage"}, "a2a"),
        ("GET", "/a2a/.well-known/agent-card.json", {}, None, "a2a"),
        ("GET", "/.well-known/agent.json", {}, None, "a2a"),
        ("POST", "/rpc", {}, {**RPC, "method": "eth_blockNumber"}, None),  # JSON-RPC of another protocol
        ("POST", "/mcp", {}, {"method": "tools/list"}, None),  # not JSON-RPC 2.0
        ("GET", "/mcp", {}, None, None),
        ("POST", "/llmproxy/mcp", SESSION, {**RPC, "method": "tools/call"}, None),  # llmproxy's own
    ],
)
def test_a_request_is_told_by_its_shape(
    method: str, path: str, headers: dict[str, str], body: Any, expected: str | None
) -> None:
    assert protocol(method, path, headers, body) == expected
