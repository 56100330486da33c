"""The control plane's tools (`llmproxy.control.mcp.tools`) served by the official MCP SDK's low-level server,
whatever carries it: stdio (`llmproxy mcp`) or Streamable HTTP on the control port (`llmproxy.control.mcp.http`).

A tool call becomes its REST request and is answered by `send` — the control plane itself, or a running
llmproxy's over HTTP — so what the call may do is what the caller's token may do. The answer comes back as the
tool's result: its JSON as text and as structured content. A refusal (403 for a read-only token on a mutating
tool, a 404, a 500) is a tool error saying so, with its status; arguments the API cannot take (a 400) are a
JSON-RPC invalid-params error naming each one, as is a tool that does not exist.
"""

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from llmproxy import __version__
from llmproxy.control.mcp.tools import ControlRequest, InvalidArguments, Tool
from llmproxy.intercept.control import Answer

NAME: Final = "llmproxy"
INSTRUCTIONS: Final = (
    "Drive a running llmproxy (an intercepting proxy that records, replays and mocks LLM API traffic): add "
    "expectations the mock answers with, read the journal of what it saw, verify requests, explain misses, "
    "change chaos. Each tool says whether it only reads or changes the run."
)

type Send = Callable[[ControlRequest, ServerRequestContext[Any, Any]], Answer]


def mcp_server(tools: Sequence[Tool], send: Send) -> Server[Any]:
    """An MCP server offering `tools`, each call answered by `send` (on a worker thread: it blocks). The
    server runs on asyncio, as both transports here do."""
    by_name = {tool.name: tool for tool in tools}
    listed = [
        types.Tool(
            name=tool.name,
            description=f"{tool.description} ({tool.endpoint})",
            input_schema=tool.input_schema,
            annotations=types.ToolAnnotations(read_only_hint=tool.access == "read"),
        )
        for tool in tools
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            raise MCPError(
                INVALID_PARAMS, f"unknown tool {params.name!r}: tools/list lists the {len(by_name)} there are"
            )
        try:
            request = tool.request(params.arguments or {})
        except InvalidArguments as error:
            raise MCPError(INVALID_PARAMS, str(error)) from None
        answer = await asyncio.to_thread(send, request, ctx)
        return result(tool, answer)

    def input_schema(name: str) -> dict[str, Any] | None:
        tool = by_name.get(name)
        return tool.input_schema if tool is not None else None

    return Server(
        NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schema,
    )


def result(tool: Tool, answer: Answer) -> types.CallToolResult:
    """The control plane's answer as the tool's result; raises MCPError (invalid params) for a 400."""
    body = answer.body
    if answer.status == 400:
        said = body.get("error", "") if isinstance(body, dict) else ""
        raise MCPError(INVALID_PARAMS, f"invalid arguments for {tool.name}: {said}")
    if isinstance(body, bytes):
        text = body.decode("utf-8", "replace")
        structured: dict[str, Any] | None = None
    else:
        text = json.dumps(body, ensure_ascii=False)
        structured = body
    if 200 <= answer.status < 300:
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)
    said = body.get("error", text) if isinstance(body, dict) else text
    return types.CallToolResult(
        content=[types.TextContent(text=f"{answer.status}: {said}")],
        structured_content={"status": answer.status} | (body if isinstance(body, dict) else {"error": said}),
        is_error=True,
    )
