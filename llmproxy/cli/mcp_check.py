"""`llmproxy mcp-check URL | -- CMD…`: the MCP protocol checks against a server
(docs/mcp.md#checking-a-server-mcp-check)."""

from typing import Literal

import click

from llmproxy.cli.output import emit, json_option
from llmproxy.cli.reporting import reported
from llmproxy.errors import UsageError
from llmproxy.options import option


@click.command(name="mcp-check")
@option(
    "--call-tools",
    type=click.Choice(("read-only", "all", "none")),
    default="read-only",
    show_default=True,
    help="Which tools to call with arguments made from their inputSchema: those annotated readOnlyHint, all, or none.",
)
@json_option
@click.argument("target", nargs=-1, type=click.UNPROCESSED)
@reported("mcp-check")
def mcp_check(call_tools: str, as_json: bool, target: tuple[str, ...]) -> int:
    """Check an MCP server against the protocol: `llmproxy mcp-check http://127.0.0.1:8089/mcp/weather`.

    Over Streamable HTTP (a URL) or stdio (`-- CMD…`): initialize, version negotiation, notifications, ping,
    an unknown method, a body that is not JSON, session ids, tools/list and its schemas, a call of each
    read-only tool, resources/list and prompts/list. A pass/fail table; exit status 1 when a check fails.
    """
    from llmproxy.mcp.check import CallTools, Checker
    from llmproxy.mcp.connection import Opener
    from llmproxy.outputs.mcp_check import document, table

    if not target:
        raise UsageError("mcp-check: give the server's URL, or its command after --")
    is_url = len(target) == 1 and target[0].startswith(("http://", "https://"))
    opener = Opener(url=target[0]) if is_url else Opener(command=list(target))
    transport: Literal["http", "stdio"] = "http" if is_url else "stdio"
    try:
        checked = Checker(opener, CallTools(call_tools)).run()
    except OSError as error:
        raise UsageError(f"mcp-check: cannot start {target[0]}: {error.strerror or error}") from None
    report = document(opener.target, transport, checked)
    click.echo(table(report), err=as_json)
    if as_json:
        emit(report)
    return 0 if report.passed else 1
