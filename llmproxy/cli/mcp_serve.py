"""`llmproxy mcp-serve FILE --server NAME`: one of an expectations file's mock MCP servers over stdio, the
command an agent's MCP configuration runs (docs/mcp.md). Not the control plane's own MCP server (`llmproxy
mcp`): this one answers as the tool server the agent is tested against would. Only JSON-RPC goes to stdout;
what llmproxy says goes to stderr."""

from pathlib import Path

import click

from llmproxy.cli.reporting import reported
from llmproxy.cli.serving import configure_logging
from llmproxy.errors import MockError, UsageError
from llmproxy.options import option


@click.command(name="mcp-serve")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@option("--server", "name", metavar="NAME", help="Which of the file's mcpServers (needed when it has several).")
@option("-v", "--verbose", count=True, help="Each message as it is answered, on stderr.")
@reported("mcp-serve")
def mcp_serve(file: Path, name: str | None, verbose: int) -> int:
    """Serve a mock MCP server of an expectations file over stdio: `llmproxy mcp-serve e.json --server NAME`.

    The server is the file's `mcpServers` entry named NAME (docs/mcp.md): its tools, resources and prompts,
    answered as over Streamable HTTP on `llmproxy mock`. It serves until its client closes stdin. In an agent's
    MCP configuration: `claude mcp add weather -- llmproxy mcp-serve e.json --server weather`.
    """
    import sys

    from llmproxy.mock.load import load_expectations
    from llmproxy.mock.mcp.server import McpServerMock
    from llmproxy.mock.mcp.stdio import serve_stdio

    configure_logging("mcp-serve", verbose)
    servers = load_expectations(file).mcpServers
    if not servers:
        raise MockError(f"{file}: it has no mcpServers to serve (docs/mcp.md)")
    names = ", ".join(server.name for server in servers)
    if name is None:
        if len(servers) > 1:
            raise UsageError(f"{file} has {len(servers)} MCP servers: choose one with --server ({names})")
        chosen = servers[0]
    else:
        found = [server for server in servers if server.name == name]
        if not found:
            raise UsageError(f"{file} has no MCP server {name!r}: it has {names}")
        chosen = found[0]
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # what anything prints goes to stderr: stdout is the client's
    serve_stdio(McpServerMock(chosen), stdin, stdout)
    return 0
