"""What `record`, `replay` and `mock` share: the listener options, and running the proxy either around a
command (`-- CMD ARGS…`) or until Ctrl-C / SIGTERM."""

import gc
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from llmproxy import redacted_logs
from llmproxy.cassette.presets import PRESETS
from llmproxy.cli.reporting import OneLineFormatter, Stopped
from llmproxy.destinations import check_reverse, parse_map
from llmproxy.environment import child_environment, export_lines
from llmproxy.errors import CommandError

if TYPE_CHECKING:
    from llmproxy.plan import Plan
    from llmproxy.session import Listening, Session

type Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def preset_option(help: str) -> Decorator:
    """`--preset`: what a client varies between runs, left out when matching recordings."""
    return click.option("--preset", type=click.Choice([*PRESETS, "none"]), help=help)


def miss_status_option(help: str) -> Decorator:
    """`--miss-status`: what a request nothing answers gets."""
    return click.option("--miss-status", type=click.IntRange(100, 999), default=599, show_default=True, help=help)


redact_field_option: Decorator = click.option(
    "--redact-field", multiple=True, metavar="NAME", help="Also redact JSON fields named NAME. Repeatable."
)


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
        click.option(
            "--explain-chain",
            is_flag=True,
            help="Print the answer chain these options build (what answers, in which order), then exit.",
        ),
        click.option("-v", "--verbose", count=True, help="More log output (-vv for debug)."),
        click.option(
            "--debug", is_flag=True, help="Show the answer chain when starting, and the traceback of an error."
        ),
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
    explain_chain: bool
    verbose: int
    debug: bool
    command: tuple[str, ...]

    def listening(self) -> "Listening":
        """Where to listen and send traffic; raises UsageError for a malformed value, before anything starts."""
        from llmproxy.session import Listening

        return Listening(
            mapping=parse_map(self.mapping),
            upstream_ca=self.upstream_ca,
            reverse=check_reverse(self.reverse),
            host=self.listen_host,
            port=self.port,
        )


def configure_logging(verbose: int, debug: bool = False) -> None:
    """Log to stderr at the verbosity asked, every record redacted (`redacted_logs`), one line each unless
    `debug`."""
    redacted_logs.install()
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter("llmproxy: %(levelname)s %(name)s: %(message)s", debug))
    logging.basicConfig(level=level, handlers=[handler])


def explain(name: str, plan: "Plan") -> int:
    """`--explain-chain`: the chain the plan builds, slot by slot, on stdout; nothing is loaded or started."""
    click.echo(f"llmproxy {name}: {plan.describe}\n{plan.explain()}")
    return 0


def serve(name: str, options: ServeOptions, session: "Session", listening: "Listening") -> int:
    """Run `session` around the command, or until stopped, with a start line and, once the proxy ran, the
    session's summary at the end (also when closing it failed). Returns the command's exit status (0 without
    one)."""
    try:
        return _serve(name, options, session, listening)
    finally:
        if session.summary and session.url:
            click.echo(f"llmproxy {name}: {session.summary}", err=True)


def _serve(name: str, options: ServeOptions, session: "Session", listening: "Listening") -> int:
    from llmproxy.session import running

    with _stopped_by_sigterm(), running(session, listening, start=False) as proxy:
        # What is loaded by now (mitmproxy, a cassette, the expectations) lives as long as the process: keep
        # the collector from walking it again and again while requests come in.
        gc.freeze()
        reverse = "".join(f", {listener.url} → {listener.target}" for listener in proxy.listeners[1:])
        click.echo(f"llmproxy {name}: proxy on {proxy.url}{reverse}; {session.describe}", err=True)
        if options.debug:
            click.echo(f"llmproxy {name}: the answer chain:\n{session.chain.explain()}", err=True)
        if proxy.base_url:
            click.echo(f"llmproxy {name}: base URL {proxy.base_url} (also in $LLMPROXY_BASE_URL)", err=True)
        if options.command:
            status = _run_child(options.command, child_environment(os.environ, proxy.environment), session.start)
        else:
            _announce(proxy.url, proxy.environment, proxy.ca_cert, options.print_env)
            session.start()
            status = 128 + _wait_for_stop()
    return status


def _announce(url: str, variables: dict[str, str], ca_cert: Path | None, only_env: bool) -> None:
    if not only_env:
        click.echo(f"Proxy: {url}\nCA certificate: {ca_cert}\nPoint a shell at it with:\n", err=True)
    click.echo(export_lines(variables), nl=False)
    if not only_env:
        click.echo("\nStop with Ctrl-C.", err=True)


@contextmanager
def _stopped_by_sigterm() -> Iterator[None]:
    """SIGTERM while the proxy starts or stops unwinds like Ctrl-C does (`Stopped`), so the proxy stops and
    the cassette is finished; the writer process, in a group of its own, finishes it even if llmproxy is
    interrupted again."""

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise Stopped(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_child(command: Sequence[str], env: dict[str, str], started: Callable[[], None]) -> int:
    """Run the command to its end and return its exit status (128 + N when killed by signal N, as a shell
    says); `started` once it runs. Ctrl-C reaches the child from the terminal (the whole process group gets
    it), and llmproxy waits for the child to finish; SIGTERM sent to llmproxy is passed on to the child."""
    try:
        child = subprocess.Popen(list(command), env=env)
    except FileNotFoundError:
        raise CommandError(f"cannot run {command[0]!r}: no such command", 127) from None
    except OSError as error:
        raise CommandError(f"cannot run {command[0]!r}: {error.strerror or error}", 126) from None
    started()

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


def _wait_for_stop() -> int:
    """Wait for Ctrl-C or SIGTERM; the signal's number."""
    stop = threading.Event()
    received: list[int] = []

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return received[0]
