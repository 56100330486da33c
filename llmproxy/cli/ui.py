"""`llmproxy ui CASSETTE|LOG|FOLDER…`: the dashboard over cassettes (and coding agents' logs) at rest — no
proxy runs; their exchanges are the journal the page reads (docs/ui.md)."""

from pathlib import Path

import click

from llmproxy.agent_logs.files import AGENTS
from llmproxy.cli.reporting import reported
from llmproxy.cli.serving import no_open_option
from llmproxy.options import option


@click.command()
@click.argument("paths", nargs=-1, metavar="CASSETTE|LOG|FOLDER…", type=click.Path(path_type=Path))
@option(
    "--from",
    "from_agents",
    multiple=True,
    type=click.Choice(AGENTS),
    help="also show this coding agent's session logs where it keeps them (repeatable; docs/agent-logs.md)",
)
@option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    help="The port of the dashboard, on 127.0.0.1 (default: a free one).",
)
@no_open_option
@option("--debug", is_flag=True, help="Show the traceback of an error.")
def ui(paths: tuple[Path, ...], from_agents: tuple[str, ...], port: int, no_open: bool, debug: bool) -> None:
    """Browse cassettes in the dashboard, no proxy running: `llmproxy ui cassettes/`.

    Serves the dashboard on 127.0.0.1 over the exchanges of each CASSETTE, or of every cassette in a FOLDER,
    and the answers in coding agents' session logs (a LOG, a FOLDER, or --from AGENT), and prints its URL
    (with its token, which only reads), opening it in the browser when stdout is a terminal. Runs until
    Ctrl-C."""
    if not paths and not from_agents:
        raise click.UsageError("name a cassette, a log or a folder, or --from AGENT")
    _serve(paths, port, no_open, debug=debug, from_agents=from_agents)


@reported("ui")
def _serve(
    paths: tuple[Path, ...], port: int, no_open: bool, debug: bool = False, from_agents: tuple[str, ...] = ()
) -> int:
    import secrets

    from llmproxy.agent_logs.exchanges import logged_exchanges
    from llmproxy.agent_logs.files import agent_of, default_locations
    from llmproxy.analysis.sources import cassette_files
    from llmproxy.cli.children import wait_for_stop
    from llmproxy.control.api import control_api
    from llmproxy.control.at_rest import session_at_rest
    from llmproxy.control.auth import Access, Tokens
    from llmproxy.control.paths import API_BASE
    from llmproxy.control.server import ControlPlane, ControlServer
    from llmproxy.control.ui import announce
    from llmproxy.errors import LlmproxyError, UsageError
    from llmproxy.intercept.engine import Intercept
    from llmproxy.words import plural

    found = cassette_files((*paths, *(path for agent in from_agents for path in default_locations(agent))))
    logs = [(path, agent) for path in found if (agent := agent_of(path)) is not None]
    cassettes = [path for path in found if path.suffix == ".json" and agent_of(path) is None]
    if not cassettes and not logs:
        raise LlmproxyError(f"no cassette or agent log in {', '.join(map(str, paths))}")
    answers = logged_exchanges(logs)
    session = session_at_rest(cassettes, answers)
    tokens = Tokens(secrets.token_urlsafe(24), secrets.token_urlsafe(24))
    # at rest nothing can be changed: the page is entered with the token that only reads
    try:
        server = ControlServer(ControlPlane(Intercept(), control_api(session)), tokens, port)
    except OSError as error:
        raise UsageError(f"--port {port}: {error.strerror}") from None
    try:
        # every entry read and summarised before the URL is given: the page's first listing only sends them
        server.plane.handle("GET", f"{API_BASE}/journal", b"", Access.READ)
        kept = session.journal.kept if session.journal is not None else 0
        read = plural(len(cassettes), "cassette") + (f" and {plural(len(answers), 'agent log')}" if answers else "")
        click.echo(f"llmproxy ui: {plural(kept, 'exchange')} from {read}", err=True)
        announce("ui", server.ui_url(read_only=True), no_open, lambda line: click.echo(line, err=True))
        click.echo("Stop with Ctrl-C.", err=True)
        return 128 + wait_for_stop()
    finally:
        server.close()
