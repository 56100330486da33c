"""`llmproxy export …`: a recorded run sent where a team's telemetry goes (no proxy, no mitmproxy import)."""

from pathlib import Path

import click

from llmproxy.cli.reporting import reported
from llmproxy.options import option
from llmproxy.words import plural


@click.group()
def export() -> None:
    """Send recorded runs to an observability backend (docs/telemetry.md#after-the-fact)."""


@export.command()
@click.argument("cassettes", nargs=-1, required=True, type=click.Path(path_type=Path))
@option(
    "--otlp",
    metavar="URL",
    help="The OTLP/HTTP collector (http://HOST:4318); default: where the OTEL_EXPORTER_OTLP_* variables say.",
)
@option("--debug", is_flag=True, help="Show the traceback of an error.")
@reported("export otlp")
def otlp(cassettes: tuple[Path, ...], otlp: str | None, debug: bool) -> int:
    """Send each exchange of CASSETTES as an OpenTelemetry GenAI span, at the time it was recorded, with its
    usage and its cost priced at that time, over OTLP/HTTP. Exits 1 when a span could not be delivered."""
    from llmproxy.telemetry.settings import check_environment

    check_environment(otlp)
    from llmproxy.cli.report import unreadable_exits
    from llmproxy.meter import Meter
    from llmproxy.telemetry.otlp import OtlpExport
    from llmproxy.telemetry.recorded import recorded_calls

    with unreadable_exits():  # a cassette that cannot be read: exit 2, as for a report
        calls = list(recorded_calls(cassettes, Meter()))  # every file read before anything is sent
    sender = OtlpExport(otlp, (("llmproxy.cassette", ", ".join(map(str, cassettes))),), pause=False)
    for call, facts in calls:
        sender.add(call, facts, wait=True)
    sender.close(patience=60)
    sent = len(calls) - sender.dropped
    click.echo(f"llmproxy export otlp: sent {plural(sent, 'span')} of {plural(len(calls), 'exchange')}", err=True)
    return 1 if sender.dropped else 0
