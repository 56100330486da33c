"""`llmproxy ui CASSETTE|FOLDER…`: the dashboard over cassettes at rest — no proxy runs; their exchanges are the
journal the page reads (docs/ui.md)."""

from pathlib import Path

import click

from llmproxy.cli.reporting import reported
from llmproxy.cli.serving import no_open_option
from llmproxy.options import option


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="CASSETTE|FOLDER…", type=click.Path(path_type=Path))
@option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    help="The port of the dashboard, on 127.0.0.1 (default: a free one).",
)
@no_open_option
@option("--debug", is_flag=True, help="Show the traceback of an error.")
def ui(paths: tuple[Path, ...], port: int, no_open: bool, debug: bool) -> None:
    """Browse cassettes in the dashboard, no proxy running: `llmproxy ui cassettes/`.

    Serves the dashboard on 127.0.0.1 over the exchanges of each CASSETTE, or of every cassette in a FOLDER,
    and prints its URL (with its token, which only reads), opening it in the browser when stdout is a
    terminal. Runs until Ctrl-C."""
    _serve(paths, port, no_open, debug=debug)


@reported("ui")
def _serve(paths: tuple[Path, ...], port: int, no_open: bool, debug: bool = False) -> int:
    import secrets

    from llmproxy.analysis.sources import cassette_files
    from llmproxy.cli.children import wait_for_stop
    from llmproxy.control.api import control_api
    from llmproxy.control.at_rest import session_at_rest
    from llmproxy.control.auth import Access, Tokens
    from llmproxy.control.models import API_BASE
    from llmproxy.control.server import ControlPlane, ControlServer
    from llmproxy.control.ui import announce
    from llmproxy.errors import LlmproxyError, UsageError
    from llmproxy.intercept.engine import Intercept
    from llmproxy.words import plural

    cassettes = [path for path in cassette_files(paths) if path.suffix == ".json"]
    if not cassettes:
        raise LlmproxyError(f"no cassette in {', '.join(map(str, paths))}")
    session = session_at_rest(cassettes)
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
        click.echo(f"llmproxy ui: {plural(kept, 'exchange')} from {plural(len(cassettes), 'cassette')}", err=True)
        announce("ui", server.ui_url(read_only=True), no_open, lambda line: click.echo(line, err=True))
        click.echo("Stop with Ctrl-C.", err=True)
        return 128 + wait_for_stop()
    finally:
        server.close()
