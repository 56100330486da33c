"""The MCP server over stdio (`llmproxy mcp`): the tools of the control API, each call sent to a running
llmproxy's control port with its token (`llmproxy.control.client.Client`) — the proxy `llmproxy mcp` started
itself, or one it attached to. What the token may not do, the tool says it may not.

While it serves, the SDK points the process's stdout at stderr, so only JSON-RPC reaches the client.
"""

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.stdio import stdio_server

from llmproxy.chain import Chain
from llmproxy.control.api import control_api
from llmproxy.control.client import Client
from llmproxy.control.mcp.server import mcp_server
from llmproxy.control.mcp.tools import ControlRequest, Tool, tools
from llmproxy.intercept.control import Answer
from llmproxy.plan import Plan
from llmproxy.proxy_session import Session


def api_tools() -> list[Tool]:
    """The tools of this version's control API, without a run (a remote one answers the calls)."""
    return tools(control_api(Session(Plan(), Chain())))


async def serve_stdio(connect: Callable[[], AbstractContextManager[Client]]) -> None:
    """Serve the tools over stdin/stdout until the MCP client closes stdin. `connect` gives the control API's
    client for as long as the server serves; it is entered once stdout is the MCP client's alone, so a proxy it
    starts writes what it says to stderr."""
    async with stdio_server() as (read_stream, write_stream):
        with connect() as client:

            def send(request: ControlRequest, ctx: ServerRequestContext[Any, Any]) -> Answer:
                return client.send(request.method, request.target, request.body)

            server = mcp_server(api_tools(), send)
            await server.run(read_stream, write_stream, server.create_initialization_options())
