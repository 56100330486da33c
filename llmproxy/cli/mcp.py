"""`llmproxy mcp`: the control plane as an MCP server over stdio, for a coding assistant or any MCP client — on
a proxy it starts itself (an empty mock, `--mock FILE`, `--replay CASSETTE`, `--record CASSETTE`) or on a
running one (`--attach`). Only JSON-RPC goes to stdout; what llmproxy says goes to stderr."""

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from llmproxy.cli.reporting import reported
from llmproxy.cli.serving import configure_logging
from llmproxy.environment import CONTROL_READ_ONLY_TOKEN_VARIABLE, CONTROL_TOKEN_VARIABLE, CONTROL_URL_VARIABLE
from llmproxy.errors import UsageError
from llmproxy.journal import DEFAULT_CAPACITY
from llmproxy.options import option

if TYPE_CHECKING:  # imported when the command runs, not when the CLI starts
    from llmproxy.control.client import Client
    from llmproxy.session import Session

_TOKENS = frozenset({CONTROL_TOKEN_VARIABLE, CONTROL_READ_ONLY_TOKEN_VARIABLE})


@click.command()
@option(
    "--mock",
    "expectations",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Start a mock answering from this expectations file (docs/mock.md); without it, --replay or --record, "
    "a mock with no expectations (add them with the tools).",
)
@option(
    "--replay",
    "cassettes",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Start a replay of this cassette (repeatable); with --mock, answer from it when no expectation does.",
)
@option("--record", type=click.Path(dir_okay=False, path_type=Path), help="Start recording to this cassette.")
@option(
    "--attach",
    is_flag=True,
    help=f"Start no proxy: drive the running one at --control-url (default ${CONTROL_URL_VARIABLE}).",
)
@option(
    "--control-url",
    metavar="URL",
    help=f"With --attach: the running llmproxy's control URL (default ${CONTROL_URL_VARIABLE}).",
)
@option(
    "--control-token",
    metavar="TOKEN",
    help=f"With --attach: its token (default ${CONTROL_TOKEN_VARIABLE}; the read-only token only reads).",
)
@option("--port", type=click.IntRange(0, 65535), default=0, help="The proxy's port (default: a free one).")
@option(
    "--base-url-port",
    type=click.IntRange(0, 65535),
    default=0,
    help="The port of llmproxy's base URL, for clients set by base URL (default: a free one).",
)
@option(
    "--journal-size",
    type=click.IntRange(0),
    default=DEFAULT_CAPACITY,
    show_default=True,
    metavar="N",
    help="Exchanges the journal keeps, the oldest dropped beyond (0: none).",
)
@option("-v", "--verbose", count=True, help="Each request as it is answered, on stderr (-vv: debug log).")
@reported("mcp")
def mcp(
    expectations: Path | None,
    cassettes: tuple[Path, ...],
    record: Path | None,
    attach: bool,
    control_url: str | None,
    control_token: str | None,
    port: int,
    base_url_port: int,
    journal_size: int,
    verbose: int,
) -> int:
    """The control plane as an MCP server over stdio: `claude mcp add llmproxy -- llmproxy mcp --attach`.

    It starts a proxy of its own (`--mock FILE`, `--replay CASSETTE`, `--record CASSETTE`; none of them: an
    empty mock) whose URL and environment it writes to stderr, or with --attach drives a running llmproxy (one
    run with `llmproxy mock|replay|record -- CMD` gives CMD the variables it reads). The tools are the control
    API's (docs/control.md#mcp); it serves until its client closes stdin.
    """
    import asyncio

    from llmproxy.control.mcp.stdio import serve_stdio

    configure_logging("mcp", verbose)
    if attach:
        if expectations is not None or cassettes or record is not None:
            raise UsageError("--attach drives a running llmproxy: it takes no --mock, --replay or --record")
        connect: AbstractContextManager[Client] = _attached(_client(control_url, control_token))
    else:
        if control_url is not None or control_token is not None:
            raise UsageError("--control-url and --control-token go with --attach")
        if record is not None and (expectations is not None or cassettes):
            raise UsageError("--record records the network: it takes no --mock or --replay")
        connect = _started(_session(expectations, cassettes, record, base_url_port, journal_size), port, base_url_port)
    try:
        asyncio.run(serve_stdio(lambda: connect))
    except BaseExceptionGroup as group:  # what stopped the server, said as any command's error is
        raise _first(group) from None
    return 0


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    inner = group.exceptions[0]
    return _first(inner) if isinstance(inner, BaseExceptionGroup) else inner


def _client(url: str | None, token: str | None) -> "Client":
    from llmproxy.control.client import Client

    url = url or os.environ.get(CONTROL_URL_VARIABLE)
    token = token or os.environ.get(CONTROL_TOKEN_VARIABLE)
    if not url or not token:
        raise UsageError(
            f"--attach needs the running llmproxy's control URL and token: --control-url and --control-token, or "
            f"${CONTROL_URL_VARIABLE} and ${CONTROL_TOKEN_VARIABLE} (llmproxy gives them to the command it runs)"
        )
    return Client(url, token)


def _session(
    expectations: Path | None, cassettes: tuple[Path, ...], record: Path | None, base_url_port: int, journal_size: int
) -> "Session":
    """The session to start, its files loaded (raises LlmproxyError before anything starts)."""
    import dataclasses

    from llmproxy.intercept.options import intercept_plan
    from llmproxy.plan import mock_plan, record_plan, replay_plan
    from llmproxy.session import Session

    intercept = intercept_plan()
    if record is not None:
        plan = record_plan(record, intercept=intercept)
    elif cassettes and expectations is None:
        plan = replay_plan(cassettes, intercept=intercept)
    else:
        plan = mock_plan(expectations, cassettes=cassettes, base_url_port=base_url_port, intercept=intercept)
    return Session.of(dataclasses.replace(plan, journal=journal_size))


@contextmanager
def _attached(client: "Client") -> Iterator["Client"]:
    yield client


@contextmanager
def _started(session: "Session", port: int, base_url_port: int) -> Iterator["Client"]:
    """`session` running while the MCP server serves; its summary on stderr at the end."""
    from llmproxy.control.client import Client
    from llmproxy.environment import export_lines
    from llmproxy.session import Listening, running

    try:
        with running(session, Listening(port=port, base_url_port=base_url_port)) as proxy:
            click.echo(f"llmproxy mcp: proxy on {proxy.url}; {session.describe}", err=True)
            # what a client of the proxy needs; not the control tokens: stderr may be an MCP client's log file
            shown = {name: value for name, value in proxy.environment.items() if name not in _TOKENS}
            click.echo(export_lines(shown), nl=False, err=True)
            yield Client(proxy.control_url, proxy.environment[CONTROL_TOKEN_VARIABLE])
    finally:
        if session.summary:
            click.echo(f"llmproxy mcp: {session.summary}", err=True)
