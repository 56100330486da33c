"""What `record`, `replay` and `mock` share: the listener options, and running the proxy either around a
command (`-- CMD ARGS…`) or until Ctrl-C / SIGTERM."""

import gc
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from llmproxy import redacted_logs
from llmproxy.environment import child_environment, export_lines
from llmproxy.errors import LlmproxyError

if TYPE_CHECKING:
    from llmproxy.session import Session

type Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def proxy_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The listener options and the trailing `-- CMD ARGS…` of every command that runs the proxy."""
    decorators: list[Decorator] = [
        click.option("--listen-host", default="127.0.0.1", show_default=True, help="Address to listen on."),
        click.option("--port", type=click.IntRange(0, 65535), default=0, help="Proxy port (default: a free one)."),
        click.option(
            "--reverse",
            "reverse",
            multiple=True,
            metavar="URL",
            help="Also listen on a port of its own that forwards to URL, for clients set by base URL. Repeatable.",
        ),
        click.option(
            "--map",
            "mapping",
            multiple=True,
            metavar="HOST=URL",
            help="Send HOST's traffic to URL while the client still talks to HOST (a gateway, a local fake).",
        ),
        click.option(
            "--upstream-ca",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Also trust this CA for upstream servers (verification stays on).",
        ),
        click.option(
            "--route",
            "routes",
            multiple=True,
            metavar="HOST=CODEC|VENDOR",
            help="Treat HOST[:PORT][/PATH] as this codec's API (a private gateway: openai-chat, anthropic-messages…,"
            " CODEC@VENDOR to name who serves it) or as a compatible VENDOR's host (deepseek…). Repeatable.",
        ),
        click.option("--print-env", is_flag=True, help="Print only the `export` lines, then run until stopped."),
        click.option("-v", "--verbose", count=True, help="More log output (-vv for debug)."),
        click.argument("command", nargs=-1, type=click.UNPROCESSED),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


@dataclass(frozen=True, slots=True)
class ServeOptions:
    listen_host: str
    port: int
    reverse: tuple[str, ...]
    mapping: tuple[str, ...]
    upstream_ca: Path | None
    routes: tuple[str, ...]
    print_env: bool
    verbose: int
    command: tuple[str, ...]


def configure_logging(verbose: int) -> None:
    """Log to stderr at the verbosity asked, every record redacted (`redacted_logs`)."""
    redacted_logs.install()
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="llmproxy: %(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def serve(name: str, options: ServeOptions, session: "Session") -> int:
    """Run `session` around the command, or until stopped, with a start line and the session's summary at
    the end. Returns the command's exit status (0 without one)."""
    from llmproxy.session import Listening, running

    listening = Listening(
        mapping=parse_map(options.mapping),
        upstream_ca=options.upstream_ca,
        reverse=options.reverse,
        host=options.listen_host,
        port=options.port,
    )
    with running(session, listening) as proxy:
        # What is loaded by now (mitmproxy, a cassette, the expectations) lives as long as the process: keep
        # the collector from walking it again and again while requests come in.
        gc.freeze()
        reverse = "".join(f", {listener.url} → {listener.target}" for listener in proxy.listeners[1:])
        click.echo(f"llmproxy {name}: proxy on {proxy.url}{reverse}; {session.describe}", err=True)
        if proxy.base_url:
            click.echo(f"llmproxy {name}: base URL {proxy.base_url} (also in $LLMPROXY_BASE_URL)", err=True)
        if options.command:
            status = _run_child(options.command, child_environment(os.environ, proxy.environment))
        else:
            _announce(proxy.url, proxy.environment, proxy.ca_cert, options.print_env)
            _wait_for_stop()
            status = 0
    click.echo(f"llmproxy {name}: {session.summary}", err=True)
    return status


def parse_map(entries: Sequence[str]) -> dict[str, str]:
    """``HOST=URL`` entries (`--map`) by lower-case host; the URLs are checked when the proxy starts."""
    mapping: dict[str, str] = {}
    for entry in entries:
        host, equals, url = entry.partition("=")
        if not equals or not host.strip() or not url.strip():
            raise LlmproxyError(f"--map expects HOST=URL, got {entry!r}")
        mapping[host.strip().lower()] = url.strip()
    return mapping


def _announce(url: str, variables: dict[str, str], ca_cert: Path | None, only_env: bool) -> None:
    if not only_env:
        click.echo(f"Proxy: {url}\nCA certificate: {ca_cert}\nPoint a shell at it with:\n", err=True)
    click.echo(export_lines(variables), nl=False)
    if not only_env:
        click.echo("\nStop with Ctrl-C.", err=True)


def _run_child(command: Sequence[str], env: dict[str, str]) -> int:
    """Run the command to its end and return its exit status (128 + N when killed by signal N). Ctrl-C
    reaches the child from the terminal, and llmproxy waits for it to finish; SIGTERM sent to llmproxy is
    passed on to the child."""
    try:
        child = subprocess.Popen(list(command), env=env)
    except OSError as error:
        raise LlmproxyError(f"cannot run {command[0]!r}: {error.strerror or error}") from error

    def forward(signum: int, _frame: FrameType | None) -> None:
        child.send_signal(signum)

    previous = {
        signal.SIGTERM: signal.signal(signal.SIGTERM, forward),
        signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN),
    }
    try:
        status = child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 - status if status < 0 else status


def _wait_for_stop() -> None:
    stop = threading.Event()

    def request_stop(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
