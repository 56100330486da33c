"""What `record`, `replay` and `mock` share: the listener options, and running the proxy either around a
command (`-- CMD ARGS…`) or until Ctrl-C / SIGTERM."""

import dataclasses
import gc
import logging
import os
import socket
import sys
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from llmproxy import log_lines
from llmproxy.cassette import redacted_logs
from llmproxy.cassette.presets import CHOICES
from llmproxy.cli.children import Interrupt, check_runnable, run_child, stopped_by_sigterm, wait_for_stop
from llmproxy.cli.output import emit
from llmproxy.destinations import check_reverse, parse_map
from llmproxy.environment import BASE_URL_VARIABLES, child_environment, export_lines
from llmproxy.errors import UsageError
from llmproxy.intercept.options import CHAOS_FIELDS, CHAOS_OPTIONS, intercept_plan
from llmproxy.journal import DEFAULT_CAPACITY
from llmproxy.options import Decorator, option

_calls = logging.getLogger("llmproxy.calls")

if TYPE_CHECKING:
    from rich.console import Console

    from llmproxy.cli.live import LiveView
    from llmproxy.intercept.settings import InterceptPlan
    from llmproxy.meter import Call
    from llmproxy.outputs import Document
    from llmproxy.plan import Plan
    from llmproxy.session import Listening, Session
    from llmproxy.telemetry.settings import TelemetryPlan


def preset_option(help: str) -> Decorator:
    """`--preset`: what a client varies between runs, left out when matching recordings."""
    return option("--preset", type=click.Choice(CHOICES), help=help)


def miss_status_option(help: str) -> Decorator:
    """`--miss-status`: what a request nothing answers gets. By default the API's own invalid-request error, which
    clients do not retry, so a miss ends the client in seconds with llmproxy's diagnostic."""
    return option(
        "--miss-status",
        type=click.IntRange(100, 999),
        help=f"{help} (default: the API's own invalid-request error, 400, marked not to be retried; 599 answers "
        "as MockServer does, and clients retry it).",
    )


strict_background_option: Decorator = option(
    "--strict-background",
    is_flag=True,
    help="Treat the CLIs' background traffic (telemetry, update checks, registry look-ups; docs/replay.md) "
    "like any request: a miss, instead of a harmless answer.",
)


background_host_option: Decorator = option(
    "--background-host",
    multiple=True,
    metavar="HOST",
    help="Treat every request to HOST as background traffic, as the telemetry llmproxy knows by its shape "
    "(docs/replay.md#background-traffic): answered harmlessly in replay and mock, never recorded. Repeatable.",
)


redact_field_option: Decorator = option(
    "--redact-field", multiple=True, metavar="NAME", help="Also redact JSON fields named NAME. Repeatable."
)


no_open_option: Decorator = option(
    "--no-open", is_flag=True, help="Print the dashboard's URL, do not open it in the browser."
)


def ui_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--ui` and `--no-open`: the dashboard on the control port (docs/ui.md), its URL printed with its token
    and opened in the browser when stdout is a terminal. Shared by `record`, `replay` and `mock`."""
    ui = option(
        "--ui",
        is_flag=True,
        help="Print the URL of the dashboard on the control port (with its token) and open it in the browser "
        "when stdout is a terminal (docs/ui.md).",
    )
    return ui(no_open_option(command))


def proxy_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The listener options and the trailing `-- CMD ARGS…` of every command that runs the proxy."""
    decorators: list[Decorator] = [
        option("--listen-host", default="127.0.0.1", show_default=True, help="Address to listen on."),
        option("--port", type=click.IntRange(0, 65535), default=0, help="Proxy port (default: a free one)."),
        option(
            "--reverse",
            "reverse",
            multiple=True,
            metavar="URL",
            help="Also listen on a port of its own that forwards to URL, for clients set by base URL. Repeatable.",
        ),
        option(
            "--map",
            "mapping",
            multiple=True,
            metavar="HOST=URL",
            help="Send HOST's traffic to URL while the client still talks to HOST (a gateway, a local fake). "
            "Repeatable.",
        ),
        option(
            "--upstream-ca",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Also trust this CA for upstream servers (verification stays on).",
        ),
        option(
            "--route",
            "routes",
            multiple=True,
            metavar="HOST=CODEC|VENDOR",
            help="Treat HOST[:PORT][/PATH] as this codec's API (a private gateway: openai-chat, anthropic-messages…,"
            " CODEC@VENDOR to name who serves it) or as a compatible VENDOR's host (deepseek…). Repeatable.",
        ),
        option(
            "--base-url-port",
            type=click.IntRange(0, 65535),
            default=0,
            help="Port of llmproxy's base URL ($LLMPROXY_BASE_URL), for clients set by base URL: it serves every "
            "provider by path (default: a free port).",
        ),
        option(
            "--base-url-env",
            is_flag=True,
            help="Also set the providers' base-URL variables (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, "
            "GOOGLE_GEMINI_BASE_URL, …) to llmproxy's base URL.",
        ),
        option("--print-env", is_flag=True, help="Print only the `export` lines, then run until stopped."),
        option(
            "--explain-chain",
            is_flag=True,
            help="Print the answer chain these options build (what answers, in which order), then exit.",
        ),
        *CHAOS_OPTIONS,
        option(
            "--journal-size",
            type=click.IntRange(0),
            default=DEFAULT_CAPACITY,
            show_default=True,
            metavar="N",
            help="Exchanges the control API's journal keeps, the oldest dropped beyond (0: no journal; "
            "docs/control.md).",
        ),
        option(
            "--live/--no-live",
            default=None,
            help="A table of the calls as they happen, on stderr (default: on a terminal, when no CMD shares it).",
        ),
        option(
            "--json",
            "as_json",
            is_flag=True,
            help="At the end, one JSON document on stdout: the run and every call (docs/json-output.md).",
        ),
        option(
            "--otel",
            is_flag=True,
            help="Export each call as an OpenTelemetry GenAI span, and the metrics, over OTLP/HTTP to where the "
            "OTEL_EXPORTER_OTLP_* variables say (needs llmproxy[otel]; docs/telemetry.md).",
        ),
        option("--otlp", metavar="URL", help="--otel, to the OTLP/HTTP collector at URL (http://HOST:4318)."),
        option(
            "--otel-content",
            is_flag=True,
            help="Put the messages on the spans, redacted as a cassette is (off: usage and metadata only).",
        ),
        option(
            "--metrics",
            is_flag=True,
            help="Serve Prometheus metrics at /metrics on the control port (docs/telemetry.md#prometheus).",
        ),
        option(
            "--control-port",
            type=click.IntRange(0, 65535),
            default=0,
            help="The control port, on 127.0.0.1 (default: a free one): fixed, a Prometheus target can name it.",
        ),
        option("-v", "--verbose", count=True, help="Each request as it is answered (-vv: debug log)."),
        option(
            "--debug",
            is_flag=True,
            help="Show the answer chain when starting, each injected fault, and the traceback of an error.",
        ),
        click.argument("command", nargs=-1, type=click.UNPROCESSED),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return ui_options(command)


@dataclass(frozen=True, slots=True)
class ServeOptions:
    listen_host: str
    port: int
    reverse: tuple[str, ...]
    mapping: tuple[str, ...]
    upstream_ca: Path | None
    routes: tuple[str, ...]
    base_url_port: int
    base_url_env: bool
    print_env: bool
    explain_chain: bool
    live: bool | None
    as_json: bool
    verbose: int
    debug: bool
    command: tuple[str, ...]
    # chaos, quotas and the budget (docs/chaos.md): unset unless given
    chaos: tuple[Path, ...] = ()
    fail: tuple[str, ...] = ()
    fail_first: int | None = None
    retry_after: str | None = None
    rpm: int | None = None
    tpm: int | None = None
    tpd: int | None = None
    budget_usd: str | None = None
    seed: int | None = None
    state: str | None = None
    journal_size: int = DEFAULT_CAPACITY
    ui: bool = False  # the dashboard's URL printed (and opened): docs/ui.md
    no_open: bool = False
    # telemetry (docs/telemetry.md)
    otel: bool = False
    otlp: str | None = None
    otel_content: bool = False
    metrics: bool = False
    control_port: int = 0

    def listening(self) -> "Listening":
        """Where to listen and send traffic. Before anything starts, raises UsageError for a malformed value and
        CommandError for a command that cannot be run (`check_runnable`)."""
        from llmproxy.session import Listening

        if self.command and not self.explain_chain:
            check_runnable(self.command, os.environ)
        return Listening(
            mapping=parse_map(self.mapping),
            upstream_ca=_certificates(self.upstream_ca),
            reverse=check_reverse(self.reverse),
            host=_address(self.listen_host),
            port=self.port,
            base_url_port=self.base_url_port,
            base_url_env=self.base_url_env,
            control_port=self.control_port,
        )

    def planned(self, plan: "Plan") -> "Plan":
        """The plan with the journal sized, the meter on when something shows the calls (`--live`, `-v`,
        `--json`), and this machine's own services let through for a command llmproxy runs."""
        if self.as_json and self.print_env:
            raise UsageError("--json and --print-env both want stdout: choose one")
        metered = self.verbose > 0 or self.as_json or self.live_view(stderr_console())
        if self.command:  # its own local daemons pass through (docs/clis.md#local-daemons)
            plan = plan.with_local_services()
        return dataclasses.replace(self.journaled(plan), meter=True) if metered else self.journaled(plan)

    def telemetry(self, plan: "Plan") -> "TelemetryPlan":
        """`--otel`, `--otlp`, `--otel-content`, `--metrics`, checked before anything starts: an endpoint that is
        no URL, or an `OTEL_*` variable llmproxy cannot follow, is a usage error."""
        from llmproxy.telemetry.settings import TelemetryPlan, check_environment

        export = self.otel or self.otlp is not None
        if self.otel_content and not export:
            raise UsageError("--otel-content puts the messages on the spans: it needs --otel or --otlp URL")
        if export:
            check_environment(self.otlp)
        if self.metrics and not plan.intercept.control:
            raise UsageError("--metrics is served on the control port, which this run does not have")
        return TelemetryPlan(export, self.otlp, self.metrics, self.otel_content)

    def journaled(self, plan: "Plan") -> "Plan":
        """The plan with the journal `--journal-size` asks for and the telemetry the options ask for
        (`--explain-chain` shows both)."""
        return dataclasses.replace(plan, journal=self.journal_size, telemetry=self.telemetry(plan))

    def live_view(self, console: "Console | None") -> bool:
        """Whether to show the live view: as asked (`--live`/`--no-live`), else when stderr is a terminal and
        no command shares it. Never when stderr is not a terminal (`console` None: it cannot be one)."""
        if console is None or not console.is_terminal:
            return False
        return self.live if self.live is not None else not self.command

    def intercept(self) -> "InterceptPlan":
        """The chaos file and the shorthands as one plan; raises LlmproxyError for a value it cannot use."""
        return intercept_plan(**{name: getattr(self, name) for name in CHAOS_FIELDS})


def _address(host: str) -> str:
    """`--listen-host`, a name or address that resolves (else a usage error, not a failed start); "" is every
    interface."""
    try:
        if host:
            socket.getaddrinfo(host, None)
    except socket.gaierror as error:
        raise UsageError(f"--listen-host {host}: {error.strerror}") from None
    return host


def _certificates(path: Path | None) -> Path | None:
    """`--upstream-ca`, a file of PEM certificates (else a usage error, not a failed connection later)."""
    if path is None:
        return None
    from cryptography import x509

    try:
        x509.load_pem_x509_certificates(path.read_bytes())
    except ValueError:
        raise UsageError(f"--upstream-ca {path}: no PEM certificate in it") from None
    return path


def stderr_console() -> "Console | None":
    """A rich console on stderr, which decides whether stderr is a terminal; None when rich would say it is
    not one (stderr is no terminal, and neither TTY_COMPATIBLE nor FORCE_COLOR says otherwise), which spares
    importing rich at every start of a proxy run by a script or a test."""
    if not sys.stderr.isatty() and not {"TTY_COMPATIBLE", "FORCE_COLOR"} & os.environ.keys():
        return None
    from rich.console import Console

    return Console(stderr=True)


def configure_logging(name: str, verbose: int, debug: bool = False) -> None:
    """Log to stderr at the verbosity asked, every record redacted (`redacted_logs`), each a line of command
    `name`'s (`log_lines`)."""
    redacted_logs.install()
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    log_lines.to_stderr(f"llmproxy {name}", level, debug)
    if debug:  # each fault as it is injected, with its rule (docs/chaos.md)
        logging.getLogger("llmproxy.intercept").setLevel(logging.DEBUG)


def explain(name: str, plan: "Plan") -> int:
    """`--explain-chain`: the chain the plan builds, slot by slot, on stdout; nothing is loaded or started."""
    click.echo(f"llmproxy {name}: {plan.describe}\n{plan.explain()}")
    return 0


def serve(
    name: str,
    options: ServeOptions,
    session: "Session",
    listening: "Listening",
    failed: Callable[["Session"], bool] = lambda session: False,
) -> int:
    """Run `session` around the command, or until stopped, with a start line and, once the proxy ran, the
    session's summary at the end (also when closing it failed) — in the live view's panel when it shows, and
    with `--json` the run's document on stdout. Returns the command's exit status (0 without one), or 1 when
    it succeeded but `failed(session)` says the run did not (a miss)."""
    console = stderr_console()
    view = None
    if console is not None and options.live_view(console):
        from llmproxy.cli.live import LiveView  # with the meter's pricing: only when the view shows

        view = LiveView(console, f"llmproxy {name}")
    meter = session.meter
    if meter is not None and options.verbose:
        meter.listen(_log_call)
    if meter is not None and view is not None:
        meter.listen(view.add)
    child: list[int] = []
    status = 1
    try:
        with view or nullcontext():
            status = _serve(name, options, session, listening, view, child)
        if status == 0 and failed(session):
            status = 1
        return status
    finally:
        if session.summary and session.url:
            if view is not None:
                view.close(session.summary, status != 0)
            else:
                click.echo(f"llmproxy {name}: {session.summary}", err=True)
        if options.as_json and session.url:
            emit(_document(name, session, status, child[0] if child else None))


def _serve(
    name: str,
    options: ServeOptions,
    session: "Session",
    listening: "Listening",
    view: "LiveView | None",
    child: list[int],
) -> int:
    from llmproxy.session import running

    say = view.say if view is not None else partial(click.echo, err=True)
    interrupt = Interrupt()
    session.stopper = interrupt  # the control API's stop: Ctrl-C, without a terminal
    with stopped_by_sigterm(), running(session, listening, start=False) as proxy:
        # What is loaded by now (mitmproxy, a cassette, the expectations) lives as long as the process: keep
        # the collector from walking it again and again while requests come in.
        gc.freeze()
        reverse = "".join(
            f", {listener.url} → {listener.target} ($LLMPROXY_REVERSE_URL_{n})"
            for n, listener in enumerate(proxy.listeners[1:], 1)
        )
        say(f"llmproxy {name}: proxy on {proxy.url}{reverse}; {session.describe}")
        if options.debug:
            say(f"llmproxy {name}: the answer chain:\n{session.chain.explain()}")
        if proxy.base_url:
            say(f"llmproxy {name}: base URL {proxy.base_url} (also in $LLMPROXY_BASE_URL)")
        if options.base_url_env:
            say(f"llmproxy {name}: {', '.join(BASE_URL_VARIABLES)} point at it")
        if options.ui:
            if not session.ui_url:
                raise UsageError("--ui: this run has no control port to serve the dashboard on")
            from llmproxy.control.ui import announce

            announce(name, session.ui_url, options.no_open, say)
        if options.command:
            env = child_environment(os.environ, proxy.environment)
            output = view.say if view is not None else None
            status = run_child(
                options.command,
                env,
                session.start,
                output=output,
                stdout_to_stderr=options.as_json,
                interrupt=interrupt,
            )
            child.append(status)
        else:
            _announce(proxy.url, proxy.environment, proxy.ca_cert, options.print_env, to_stderr=options.as_json)
            session.start()
            status = 128 + wait_for_stop(interrupt)
    return status


def _announce(url: str, variables: dict[str, str], ca_cert: Path | None, only_env: bool, to_stderr: bool) -> None:
    if not only_env:
        click.echo(f"Proxy: {url}\nCA certificate: {ca_cert}\nPoint a shell at it with:\n", err=True)
    click.echo(export_lines(variables), nl=False, err=to_stderr)
    if not only_env:
        click.echo("\nStop with Ctrl-C.", err=True)


def _log_call(call: "Call") -> None:
    """`-v`: each request as it is answered, in a line."""
    _calls.info("%s", call.line())


def _document(name: str, session: "Session", status: int, child: int | None) -> "Document":
    from llmproxy.outputs.run import Run, UnusedRow, call_row, miss_row, run_totals

    calls = session.meter.calls if session.meter is not None else []
    unused = [UnusedRow(id=e.id, method=e.request.method, url=e.request.url) for e in session.unused]
    replaying = session.replay.state.value if session.replay is not None else None
    return Run(
        command=name,  # type: ignore[arg-type]
        exitStatus=status,
        commandExitStatus=child,
        proxy=session.url,
        describe=session.describe,
        summary=session.summary.splitlines(),
        misses=[miss_row(miss, replaying.cassette_of(miss) if replaying else None) for miss in session.misses],
        unused=unused,
        refused=session.refused,
        calls=[call_row(call) for call in calls],
        totals=run_totals(calls),
    )
