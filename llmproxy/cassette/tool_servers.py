"""A recorded exchange's tool protocol: MCP for a stdio server's (`llmproxy mcp-tap`) and for an HTTP request of
MCP's shape, A2A for one of A2A's (`llmproxy.tool_protocols`). Recording stores them as it found them; the
shape that made them recorded tells their kind when they are read back."""

from llmproxy.cassette.model import Exchange, JsonBody, header_pairs
from llmproxy.tool_protocols import ToolProtocol, protocol

_STDIO = "stdio://"


def protocol_of(exchange: Exchange) -> ToolProtocol | None:
    request = exchange.request
    if request.url.startswith(_STDIO):
        return "mcp"
    path = request.url.partition("?")[0].partition("://")[2].partition("/")[2]
    headers = {name.lower(): value for name, value in header_pairs(request.headers)}
    body = request.body.json_ if isinstance(request.body, JsonBody) else None
    return protocol(request.method.upper(), "/" + path, headers, body)
