"""`llmproxy replay`: serve recorded exchanges, strictly and offline by default."""

from pathlib import Path
from typing import TYPE_CHECKING

import click

from llmproxy.cassette import jsonpath
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import MatchOptions, OnExhausted
from llmproxy.cli.reporting import reported
from llmproxy.cli.serving import (
    ServeOptions,
    background_host_option,
    configure_logging,
    explain,
    miss_status_option,
    preset_option,
    proxy_options,
    redact_field_option,
    serve,
    strict_background_option,
)
from llmproxy.options import option
from llmproxy.plan import parse_timing

if TYPE_CHECKING:
    from llmproxy.intercept.settings import InterceptPlan


def _timing(value: str) -> float | None:
    try:
        return parse_timing(value)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--timing") from None


def _ignore(values: tuple[str, ...]) -> tuple[jsonpath.Path, ...]:
    try:
        return tuple(jsonpath.parse(value) for value in values)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--ignore") from None


@click.command(context_settings={"allow_interspersed_args": False})
@option(
    "--cassette",
    "cassettes",
    multiple=True,
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Cassette to serve (repeatable; new recordings go to the first).",
)
@option(
    "--record-mode",
    type=click.Choice(["none", "once", "new_episodes", "all", "rewrite"]),
    default="none",
    show_default=True,
    help="none: offline, strict; once; new_episodes; all; rewrite (vcrpy's meanings).",
)
@option("--allow-host", multiple=True, metavar="HOST", help="Let traffic to HOST reach the network. Repeatable.")
@preset_option(
    "Ignore what this client varies between runs (default: the default preset — working directory, HOME,"
    " date-times, run ids — and the client's, from its User-Agent; `default`: the default preset alone;"
    " `none`: compare as sent)."
)
@option(
    "--ignore", multiple=True, metavar="JSONPATH", help="Ignore this body field when matching ($.a.b[0]). Repeatable."
)
@option(
    "--on-exhausted",
    type=click.Choice([mode.value for mode in OnExhausted]),
    default=OnExhausted.ERROR.value,
    show_default=True,
    help="When identical requests outnumber their recordings: serve the last again, or miss.",
)
@miss_status_option("The status of a request with no recording.")
@strict_background_option
@option("--timing", default="recorded", show_default=True, help="recorded, instant, or a scale (0.5: twice as fast).")
@option("--instant", is_flag=True, help="--timing instant; and --what-if counts every call as sent at once.")
@option(
    "--what-if",
    is_flag=True,
    help="Only report at which recorded call --budget-usd, --rpm, --tpm (or --chaos) would have refused, offline.",
)
@option("--fail-on-unused", is_flag=True, help="Exit non-zero if some recorded exchanges were never served.")
@background_host_option
@redact_field_option
@proxy_options
@reported("replay")
def replay(
    cassettes: tuple[Path, ...],
    record_mode: str,
    allow_host: tuple[str, ...],
    preset: str | None,
    ignore: tuple[str, ...],
    on_exhausted: str,
    miss_status: int | None,
    strict_background: bool,
    timing: str,
    instant: bool,
    what_if: bool,
    fail_on_unused: bool,
    background_host: tuple[str, ...],
    redact_field: tuple[str, ...],
    **serving: object,
) -> int:
    """Serve recorded LLM exchanges: `llmproxy replay --cassette c.json -- CMD ARGS…`.

    In the default mode (`none`) nothing reaches the network: a request with no recording gets
    its API's invalid-request error (400, not retried) with a diagnostic naming the closest recording and
    what differs, and llmproxy exits non-zero; the CLIs' background traffic gets a harmless answer.
    Streams keep their recorded timing unless --timing says otherwise.
    """
    from llmproxy.plan import RecordMode, replay_plan
    from llmproxy.session import Session

    options = ServeOptions(**serving)  # type: ignore[arg-type]
    configure_logging("replay", options.verbose, options.debug)
    match = MatchOptions(preset, _ignore(ignore), OnExhausted(on_exhausted))
    listening = options.listening()  # a malformed option fails before a cassette is touched
    intercept = options.intercept()
    if what_if:
        return _what_if(cassettes, intercept, instant)
    plan = replay_plan(
        cassettes,
        mode=RecordMode(record_mode),
        match=match,
        timing=None if instant else _timing(timing),
        miss_status=miss_status,
        strict_background=strict_background,
        allow_hosts=allow_host,
        redactor=Redactor(frozenset(redact_field)),
        background_hosts=background_host,
        routes=options.routes,
        intercept=intercept,
    )
    if options.explain_chain:
        return explain("replay", options.journaled(plan))
    session = Session.of(options.planned(plan))
    return serve(
        "replay",
        options,
        session,
        listening,
        lambda run: run.strict_misses or run.upstream_unreachable or (fail_on_unused and bool(run.unused)),
    )


def _what_if(cassettes: tuple[Path, ...], intercept: "InterceptPlan", instant: bool) -> int:
    """`--what-if`: the recorded calls under the limits, offline; the report on stderr, nothing served."""
    from llmproxy.analysis.sources import Recorded
    from llmproxy.analysis.whatif import what_if
    from llmproxy.errors import UsageError
    from llmproxy.pricing import PriceBook

    if not intercept.configured:
        raise UsageError("--what-if needs a limit to try: --budget-usd, --rpm, --tpm, --tpd or --chaos")
    book = PriceBook()
    recorded = Recorded(list(cassettes), book)
    for line in what_if(recorded.calls, intercept.chaos, instant=instant, book=book).lines():
        click.echo(f"llmproxy replay: {line}", err=True)
    return 0
