"""An agent's side of a stdio MCP server, for the tap's tests: the official `mcp` SDK's client runs the
command it is given and writes what it got from the server (every tool, resource and prompt listed, and
each tool called) as JSON, so a recording and its replay can be compared whole. Run as a script, it is the
agent under `llmproxy record|replay --`: `python client.py OUT.json CMD…`."""

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

CLIENT = Path(__file__)
CALLS: dict[str, list[dict[str, Any]]] = {  # the worked example's tools; anything else gets {}
    "get_forecast": [{"city": "Paris"}, {"city": "OSLO"}, {"city": "Rome"}, {"city": "Rome"}],
    "refresh": [{}, {}],
    "echo": [{"message": "hello"}],
    "get-sum": [{"a": 2, "b": 3}],
}


async def session(command: list[str], errlog: Any) -> dict[str, Any]:
    parameters = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    seen: dict[str, Any] = {}
    async with Client(stdio_client(parameters, errlog=errlog)) as client:
        tools = (await client.list_tools()).tools
        seen["tools"] = [tool.model_dump(mode="json") for tool in tools]
        for tool in tools:
            for arguments in CALLS.get(tool.name, []):
                try:
                    result = (await client.call_tool(tool.name, arguments)).model_dump(mode="json")
                except MCPError as error:
                    result = {"error": [error.code, error.error.message]}
                seen.setdefault("calls", []).append([tool.name, arguments, result])
        seen["resources"] = (await client.list_resources()).model_dump(mode="json")
        seen["prompts"] = (await client.list_prompts()).model_dump(mode="json")
    return seen


def run_client(home: Path, command: list[str]) -> dict[str, Any]:
    """What the SDK client gets through `command`, its stderr kept in `home`."""
    with (home / "client-stderr.txt").open("a") as errlog:
        return asyncio.run(session(command, errlog))


if __name__ == "__main__":
    out, *rest = sys.argv[1:]
    Path(out).write_text(json.dumps(asyncio.run(session(rest, sys.stderr))))
