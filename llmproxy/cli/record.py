"""`llmproxy record`: run the proxy and write every LLM exchange to a redacted cassette."""

from pathlib import Path

import click

from llmproxy.cassette.redact import Redactor
from llmproxy.cli.reporting import reported
from llmproxy.cli.serving import (
    ServeOptions,
    background_host_option,
    configure_logging,
    explain,
    proxy_options,
    redact_field_option,
    serve,
)
from llmproxy.options import option


@click.command(context_settings={"allow_interspersed_args": False})
@option(
    "--cassette", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Cassette to write (appended)."
)
@option("--record-host", multiple=True, metavar="HOST", help="Also record all traffic to HOST. Repeatable.")
@option("--record-all", is_flag=True, help="Record all HTTP(S) traffic, not only LLM APIs.")
@option(
    "--record-unanswered",
    is_flag=True,
    help="Also record requests the upstream never answered whole (refused, timed out, cut off): an outage.",
)
@background_host_option
@redact_field_option
@proxy_options
@reported("record")
def record(
    cassette: Path,
    record_host: tuple[str, ...],
    record_all: bool,
    record_unanswered: bool,
    background_host: tuple[str, ...],
    redact_field: tuple[str, ...],
    **serving: object,
) -> int:
    """Record LLM traffic to a cassette: `llmproxy record --cassette c.json -- CMD ARGS…`.

    With a command, it runs with the proxy and CA settings in its environment and llmproxy exits with its
    status. Without one, llmproxy prints the settings to use and records until Ctrl-C or SIGTERM.
    Exchanges with known LLM API hosts, and LLM API paths on any host, are recorded; everything else passes
    through untouched. Secrets are redacted before anything is written. A request the upstream never
    answered is named at the end, not recorded; if nothing could be recorded, llmproxy exits 1.
    """
    from llmproxy.plan import record_plan
    from llmproxy.session import Session

    options = ServeOptions(**serving)  # type: ignore[arg-type]
    # before the writer process starts: it logs at the same level
    configure_logging("record", options.verbose, options.debug)
    listening = options.listening()  # a malformed option fails before the cassette is touched
    plan = record_plan(
        cassette,
        record_hosts=record_host,
        record_all=record_all,
        redactor=Redactor(frozenset(redact_field)),
        background_hosts=background_host,
        routes=options.routes,
        intercept=options.intercept(),
        record_unanswered=record_unanswered,
    )
    if options.explain_chain:
        return explain("record", options.journaled(plan))
    session = Session.of(options.planned(plan))
    return serve("record", options, session, listening, lambda run: run.upstream_unreachable)
