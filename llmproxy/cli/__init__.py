"""The `llmproxy` command line.

Each command's module is imported only when that command runs: `llmproxy --help` lists the commands from
the table below without importing any of them, and commands that run the proxy import mitmproxy (through
the adapters, `llmproxy_addons`) only once they start it. Importing every command costs ten times what
Python's own start does.
"""

import importlib
from typing import Any

import click

from llmproxy import __version__

# name: (module, attribute, the first paragraph of the command's help — what `--help` lists; a test holds
# them equal)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "addon-path": (
        "llmproxy.cli.addon_path",
        "addon_path",
        "Print the path of llmproxy's mitmproxy script, to run llmproxy inside your own mitmproxy:",
    ),
    "ca": ("llmproxy.cli.ca", "ca", "Print the path of llmproxy's CA certificate, creating the CA on first use."),
    "cassette": ("llmproxy.cli.cassette", "cassette", "Inspect and convert cassette files."),
    "chaos": ("llmproxy.cli.chaos", "chaos", "Chaos files, and the chaos of a running llmproxy (docs/chaos.md)."),
    "doctor": (
        "llmproxy.cli.doctor",
        "doctor",
        "Check that CMD's traffic would go through llmproxy and trust its CA: `llmproxy doctor -- claude`.",
    ),
    "explain": (
        "llmproxy.cli.explain",
        "explain",
        "Explain a recorded agent run: its calls in order and its richest conversation (the request with the "
        "most history) as a call graph — a node per message and per tool call; edges NEXT, INVOKES, RESULT.",
    ),
    "export": (
        "llmproxy.cli.export",
        "export",
        "Send recorded runs to an observability backend (docs/telemetry.md#after-the-fact).",
    ),
    "mcp": (
        "llmproxy.cli.mcp",
        "mcp",
        "The control plane as an MCP server over stdio: `claude mcp add llmproxy -- llmproxy mcp --attach`.",
    ),
    "mcp-check": (
        "llmproxy.cli.mcp_check",
        "mcp_check",
        "Check an MCP server against the protocol: `llmproxy mcp-check http://127.0.0.1:8089/mcp/weather`.",
    ),
    "mcp-serve": (
        "llmproxy.cli.mcp_serve",
        "mcp_serve",
        "Serve a mock MCP server of an expectations file over stdio: `llmproxy mcp-serve e.json --server NAME`.",
    ),
    "mcp-tap": (
        "llmproxy.cli.mcp_tap",
        "mcp_tap",
        "Record or replay a stdio MCP server: `llmproxy mcp-tap -- npx @modelcontextprotocol/server-everything`.",
    ),
    "mock": (
        "llmproxy.cli.mock",
        "mock",
        "Serve scripted LLM answers: `llmproxy mock --expectations FILE [-- CMD ARGS…]`.",
    ),
    "record": (
        "llmproxy.cli.record",
        "record",
        "Record LLM traffic to a cassette: `llmproxy record --cassette c.json -- CMD ARGS…`.",
    ),
    "replay": (
        "llmproxy.cli.replay",
        "replay",
        "Serve recorded LLM exchanges: `llmproxy replay --cassette c.json -- CMD ARGS…`.",
    ),
    "report": (
        "llmproxy.cli.report",
        "report",
        "Report on recorded LLM calls: cost, cache use, retries, and the changes that would save money.",
    ),
    "ui": (
        "llmproxy.cli.ui",
        "ui",
        "Browse cassettes in the dashboard, no proxy running: `llmproxy ui cassettes/`.",
    ),
    "verify": (
        "llmproxy.cli.verify",
        "verify",
        "CI gates over recorded runs (cassettes): exit 0 pass, 1 fail, 2 could not check.",
    ),
}


class LazyGroup(click.Group):
    """A group whose commands are imported when one is run or asked for its help, not to list them. A command
    line that cannot work, for any command under it, is said in one line (`usage.py`)."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            raise _one_line(error) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            raise _one_line(error) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attribute, _ = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        limit = formatter.width - 6 - max(map(len, COMMANDS))
        # a stand-in with the same help shortens it as the command itself would
        rows = [
            (name, click.Command(name, help=summary).get_short_help_str(limit))
            for name, (_, _, summary) in sorted(COMMANDS.items())
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _one_line(error: click.UsageError) -> click.UsageError:
    from llmproxy.cli.usage import OneLine  # only when something is wrong: `--help` imports no command's module

    return error if isinstance(error, OneLine) else OneLine(error)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="llmproxy")
def main() -> None:
    """Record, replay, mock, stress and understand LLM API traffic.

    llmproxy is an intercepting HTTPS proxy that speaks the wire formats of the major LLM providers.
    """
