"""`llmproxy verify …`: CI gates over recorded runs. Exit 0 pass, 1 fail, 2 could not check; one line per
reason on stderr, or on a pass what it passed on; `--json` prints the verdict as its gate's document on stdout
(`outputs/verify.py`) — an input a gate cannot read is a could-not-check verdict, in the document too."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from llmproxy.cli.output import emit, json_option
from llmproxy.cli.report import build_from_cli, load_baseline, read_selected, selection_options
from llmproxy.errors import LlmproxyError
from llmproxy.options import option

if TYPE_CHECKING:
    from llmproxy.analysis.calls import RecordedCall
    from llmproxy.analysis.coverage import Coverage
    from llmproxy.analysis.gates import Verdict
    from llmproxy.analysis.sources import Recorded

_PATHS = click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
_JSON = json_option
_PARTIAL = option(
    "--allow-partial",
    is_flag=True,
    help="pass on what the gate saw when it did not see every call (--max-calls, exchanges that do not decode)",
)


@click.group()
def verify() -> None:
    """CI gates over recorded runs (cassettes): exit 0 pass, 1 fail, 2 could not check."""


def finish(verdict: "Verdict", as_json: bool, coverage: "Coverage | None" = None, allow_partial: bool = False) -> None:
    """Print the verdict and exit with its status; a gate over selected calls is judged on its `coverage` too."""
    if coverage is not None:
        from llmproxy.analysis.gates import covered

        verdict = covered(verdict, coverage, allow_partial)
    if as_json:
        from llmproxy.outputs.verify import verification

        emit(verification(verdict.as_json()))
    for reason in verdict.reasons:
        click.echo(f"llmproxy verify {verdict.gate}: {reason}", err=True)
    if not verdict.reasons:
        click.echo(f"llmproxy verify {verdict.gate}: {verdict.passed_line()}", err=True)
    raise SystemExit(int(verdict.outcome))


@contextmanager
def judging(gate: str, as_json: bool) -> Iterator[None]:
    """An input the gate cannot read (a cassette, a baseline, a prices file): it could not check, exit 2."""
    from llmproxy.analysis.gates import GateOutcome, Verdict

    try:
        yield
    except LlmproxyError as error:
        finish(Verdict(gate, GateOutcome.COULD_NOT_CHECK, [str(error)], summary="nothing was judged"), as_json)


def _calls(paths: tuple[Path, ...], selection: dict[str, Any]) -> "tuple[Recorded, list[RecordedCall], Coverage]":
    """The selected calls, and what they are of the calls the gate was asked about."""
    from llmproxy.analysis.build import select
    from llmproxy.analysis.coverage import Coverage

    recorded, chosen = read_selected(paths, **selection)
    calls, dropped = select(recorded.calls, chosen)
    skipped = ((source.path, source.skipped) for source in recorded.sources)
    return recorded, calls, Coverage.of(len(calls), dropped, chosen.max_calls, skipped)


@verify.command("tool-call")
@_PATHS
@option("--name", required=True, help="the tool's name")
@option("--args-regex", help="a regular expression its arguments (compact JSON) must contain")
@option("--at-least", type=click.IntRange(min=0), help="the fewest calls accepted (default: 1, or 0 with --at-most)")
@option("--at-most", type=click.IntRange(min=0), help="the most calls accepted (0: never called)")
@selection_options
@_PARTIAL
@_JSON
def tool_call(
    paths: tuple[Path, ...],
    name: str,
    args_regex: str | None,
    at_least: int | None,
    at_most: int | None,
    allow_partial: bool,
    as_json: bool,
    **selection: Any,
) -> None:
    """The model called tool NAME between --at-least and --at-most times (in the recorded answers): at least
    once when neither is given."""
    import re

    from llmproxy.analysis import gates

    if at_least is None:
        at_least = 0 if at_most is not None else 1
    elif at_most is not None and at_least > at_most:
        raise click.BadParameter(f"--at-least {at_least} is more than --at-most {at_most}", param_hint="--at-least")

    if args_regex is not None:
        try:
            re.compile(args_regex)
        except re.error as exc:
            raise click.BadParameter(f"not a regular expression: {exc}", param_hint="--args-regex") from None
    with judging("tool-call", as_json):
        _, calls, coverage = _calls(paths, selection)
    finish(gates.tool_call(calls, name, args_regex, at_least, at_most), as_json, coverage, allow_partial)


@verify.command("structured-output")
@_PATHS
@option("--schema", required=True, type=click.Path(dir_okay=False, path_type=Path), help="a JSON Schema file")
@selection_options
@_PARTIAL
@_JSON
def structured_output(
    paths: tuple[Path, ...], schema: Path, allow_partial: bool, as_json: bool, **selection: Any
) -> None:
    """Every recorded answer with text is JSON that meets the schema (answers with no text are skipped)."""
    from llmproxy.analysis import gates

    with judging("structured-output", as_json):
        try:
            document = json.loads(schema.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LlmproxyError(f"cannot read the schema {schema}: {exc}") from None
        _, calls, coverage = _calls(paths, selection)
    finish(gates.structured_output(calls, document), as_json, coverage, allow_partial)


@verify.command("cost")
@_PATHS
@option("--max-usd", required=True, help="the budget in US dollars, e.g. 0.40")
@option("--price-as", "price_model", help="price every call as this model (the recorded one otherwise)")
@option("--allow-unpriced", is_flag=True, help="pass even when some calls could not be priced")
@selection_options
@_PARTIAL
@_JSON
def cost(
    paths: tuple[Path, ...],
    max_usd: str,
    price_model: str | None,
    allow_unpriced: bool,
    allow_partial: bool,
    as_json: bool,
    **selection: Any,
) -> None:
    """The recorded calls' estimated cost is at most --max-usd. Unpriced calls fail the gate unless
    --allow-unpriced (the total would understate the cost)."""
    from llmproxy.analysis import gates

    try:
        budget = Decimal(max_usd.lstrip("$"))
    except InvalidOperation:
        raise click.BadParameter(f"{max_usd!r} is not an amount of dollars", param_hint="--max-usd") from None
    with judging("cost", as_json):
        recorded, calls, coverage = _calls(paths, selection)
    finish(gates.cost(calls, recorded.book, budget, price_model, allow_unpriced), as_json, coverage, allow_partial)


@verify.command("resilience")
@_PATHS
@option("--require-retry", is_flag=True, help="fail a refused request the client did not retry")
@option("--honour-retry-after", is_flag=True, help="fail a retry sooner than the retry-after it was sent")
@selection_options
@_PARTIAL
@_JSON
def resilience(
    paths: tuple[Path, ...],
    require_retry: bool,
    honour_retry_after: bool,
    allow_partial: bool,
    as_json: bool,
    **selection: Any,
) -> None:
    """The client got past every fault llmproxy injected into the recorded run (docs/chaos.md): it retried or
    carried on, and never gave up on one. No injected fault: exit 2."""
    from llmproxy.analysis import gates

    with judging("resilience", as_json):
        _, calls, coverage = _calls(paths, selection)
    finish(gates.resilience(calls, require_retry, honour_retry_after), as_json, coverage, allow_partial)


@verify.command("report")
@_PATHS
@option("--baseline", required=True, type=click.Path(dir_okay=False, path_type=Path), help="the earlier report (JSON)")
@option("--max-grade-drop", type=click.IntRange(min=0), help="letters the grade may lose (0: none)")
@option("--max-cost-increase", help="how much the estimated cost may rise: 10% or 0.1")
@option("--min-cache-hit", type=click.FloatRange(0, 1), help="the lowest cache-hit ratio accepted, e.g. 0.6")
@selection_options
@_PARTIAL
@_JSON
def report_gate(
    paths: tuple[Path, ...],
    baseline: Path,
    max_grade_drop: int | None,
    max_cost_increase: str | None,
    min_cache_hit: float | None,
    allow_partial: bool,
    as_json: bool,
    **selection: Any,
) -> None:
    """The run has not regressed against a baseline report (`llmproxy report --format json`)."""
    from llmproxy.analysis import gates
    from llmproxy.analysis.baseline import compare
    from llmproxy.analysis.coverage import Coverage

    rise = _fraction(max_cost_increase) if max_cost_increase is not None else None
    with judging("report", as_json):
        previous = load_baseline(baseline)
        current = build_from_cli(paths, **selection)
    current = current.model_copy(update={"baseline": compare(current, previous, str(baseline))})
    verdict = gates.report_regression(current, previous, max_grade_drop, rise, min_cache_hit)
    finish(verdict, as_json, Coverage.of_report(current), allow_partial)


def _fraction(text: str) -> float:
    try:
        return float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a percentage (10%) or a fraction (0.1)") from None


@verify.command("drift")
@click.argument("path", type=click.Path(path_type=Path))
@option("--live", is_flag=True, help="required: the requests really are sent to the provider (keys, cost)")
@option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True, help="seconds per request")
@_JSON
def drift(path: Path, live: bool, timeout: float, as_json: bool) -> None:
    """Re-send the cassette's requests to the live provider and report structural changes in the answers
    (fields added, removed, retyped). Keys come from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY,
    GEMINI_API_KEY). Fail-closed: an exchange it cannot re-send is "could not check" (exit 2), never "no drift".
    """
    from llmproxy.analysis.drift import check, sender, verdict
    from llmproxy.cassette.store import load_cassette

    if not live:
        click.echo("llmproxy verify drift: needs --live (it sends the recorded requests to the provider)", err=True)
        raise SystemExit(2)
    with judging("drift", as_json):
        exchanges = load_cassette(path).exchanges
    finish(verdict(check(exchanges, sender(timeout))), as_json)
