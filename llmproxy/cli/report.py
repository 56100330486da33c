"""`llmproxy report PATH…`: what a recorded run cost, where it wasted, what to change."""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from llmproxy.agent_logs.files import AGENTS
from llmproxy.cli import usage
from llmproxy.cli.output import json_option
from llmproxy.errors import LlmproxyError
from llmproxy.options import option

if TYPE_CHECKING:  # the analysis (and the price data) loads only when a command runs
    from llmproxy.analysis.build import Selection
    from llmproxy.analysis.report import Report
    from llmproxy.analysis.sources import Recorded

FORMATS = ("terminal", "markdown", "json", "csv", "html")


def parse_since(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not an ISO 8601 date or time (2026-05-01, 2026-05-01T12:00Z)", param_hint="--since"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def selection_options[F: Callable[..., object]](command: F) -> F:
    """The options that choose what a report covers, shared by `report`, `explain` and `verify`."""
    for decorate in reversed(
        (
            option("--session", help="only this session (its id as the report lists it)"),
            option("--host", help="only calls to this host"),
            option("--provider", help="only this API family or vendor (anthropic, openai, google…)"),
            option("--model", help="only this model (a glob: 'claude-*')"),
            option("--since", help="only calls started at or after this ISO 8601 date or time (UTC if no zone)"),
            option(
                "--max-calls",
                type=click.IntRange(min=0),
                default=0,
                help="only the newest N calls (default, and 0: all); every output says what it left out",
            ),
            option(
                "--group-by",
                type=click.Choice(["cassette", "folder", "conversation", "host"]),
                default="cassette",
                show_default=True,
                help="what a session is (one cassette per test: cassette)",
            ),
            option(
                "--from",
                "from_agents",
                multiple=True,
                type=click.Choice(AGENTS),
                help="also read this coding agent's session logs where it keeps them (repeatable; docs/agent-logs.md)",
            ),
            option(
                "--prices",
                "prices_files",
                multiple=True,
                type=click.Path(dir_okay=False, path_type=Path),
                help="a JSON file of prices that add to or override the library's (repeatable)",
            ),
        )
    ):
        command = decorate(command)
    return command


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@selection_options
@option("--format", "format_", type=click.Choice(FORMATS), help="default: terminal on a TTY, else markdown")
@json_option
@option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="write here (default: stdout)")
@option(
    "--baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="an earlier report (--json) to compare with: signals new / resolved / unchanged, KPI deltas",
)
@option(
    "--reconcile",
    is_flag=True,
    help="check agents' logs against a recording of the same run, call by call (PATHS: the logs and the cassette)",
)
def report(
    paths: tuple[Path, ...],
    format_: str | None,
    as_json: bool,
    output: Path | None,
    baseline: Path | None,
    reconcile: bool,
    **selection: Any,
) -> None:
    """Report on recorded LLM calls: cost, cache use, retries, and the changes that would save money.

    PATHS are cassettes, coding agents' session logs, or folders searched for them, or globs; --from AGENT
    reads an agent's logs where it keeps them. --json is --format json. Exits 2 when an input cannot be read.
    """
    from llmproxy.analysis.render import render
    from llmproxy.cassette.store import gc_paused

    fmt = json_format(format_, as_json)
    if reconcile:
        with unreadable_exits():
            _reconcile(paths, fmt, output, **selection)
        return
    with gc_paused(), unreadable_exits():  # what is read lives until the report is written: no collection
        built = build_from_cli(paths, **selection)
        if baseline is not None:
            from llmproxy.analysis.baseline import compare

            built = built.model_copy(update={"baseline": compare(built, load_baseline(baseline), str(baseline))})
        fmt = fmt or ("terminal" if output is None and sys.stdout.isatty() else "markdown")
        if fmt == "terminal" and output is None:
            from rich.console import Console

            from llmproxy.analysis.render.terminal import terminal_view

            Console().print(terminal_view(built))
            return
        write_output(render(built, fmt), output)


def _reconcile(paths: tuple[Path, ...], fmt: str | None, output: Path | None, **selection: Any) -> None:
    """`--reconcile`: the logs among PATHS (and --from's) against the cassettes among them. Exits 1 when a
    logged answer has no recorded call or its tokens differ from the wire's."""
    import orjson

    from llmproxy.agent_logs.files import agent_of, default_locations
    from llmproxy.analysis.reconcile import reconcile
    from llmproxy.analysis.sources import cassette_files
    from llmproxy.pricing import PriceBook, load_price_rules

    if fmt not in (None, "json", "terminal", "markdown"):
        raise click.UsageError(f"--reconcile writes a table or --json, not --format {fmt}")
    found = cassette_files((*paths, *(p for agent in selection["from_agents"] for p in default_locations(agent))))
    logs = [(path, agent) for path in found if (agent := agent_of(path)) is not None]
    cassettes = [path for path in found if agent_of(path) is None]
    if not logs or not cassettes:
        raise click.UsageError("--reconcile needs an agent's logs and a cassette of the same run")
    book = PriceBook([rule for path in selection["prices_files"] for rule in load_price_rules(path)])
    result = reconcile(logs, cassettes, book)
    text = result.table() if fmt != "json" else orjson.dumps(result.as_json(), option=orjson.OPT_INDENT_2).decode()
    write_output(text if text.endswith("\n") else text + "\n", output)
    if not result.agrees:
        raise SystemExit(1)


def read_selected(
    paths: tuple[Path, ...],
    *,
    session: str | None,
    host: str | None,
    provider: str | None,
    model: str | None,
    since: str | None,
    max_calls: int,
    group_by: str,
    prices_files: tuple[Path, ...],
    from_agents: tuple[str, ...] = (),
) -> "tuple[Recorded, Selection]":
    """The calls in the cassettes and logs and the selection the options describe. Raises LlmproxyError when
    an input cannot be read."""
    from llmproxy.agent_logs.files import default_locations
    from llmproxy.analysis.build import Selection
    from llmproxy.analysis.sources import Grouping, Recorded
    from llmproxy.pricing import PriceBook, load_price_rules

    paths = (*paths, *(found for agent in from_agents for found in default_locations(agent)))
    if not paths:
        raise click.UsageError("name a cassette, a log or a folder, or --from AGENT")
    book = PriceBook([rule for path in prices_files for rule in load_price_rules(path)])
    recorded = Recorded(paths, book, Grouping(group_by))
    return recorded, Selection(session, host, provider, model, parse_since(since), max_calls)


def build_from_cli(paths: tuple[Path, ...], **options: Any) -> "Report":
    """The report the selection options describe."""
    from llmproxy.analysis.build import build_report
    from llmproxy.cassette.store import gc_paused

    with gc_paused():  # the calls read and the report's objects all live on: collecting would find nothing
        recorded, selection = read_selected(paths, **options)
        return build_report(
            recorded.calls,
            recorded.sources,
            book=recorded.book,
            grouping=recorded.grouping,
            selection=selection,
            conversation=recorded.conversation,
            prices_files=[path.name for path in options["prices_files"]],
            tool_servers=recorded.tool_servers.ordered(),
        )


def load_baseline(path: Path) -> "Report":
    """Raises LlmproxyError when it cannot be read as a report."""
    from llmproxy.analysis.baseline import read_baseline

    return read_baseline(path)


def json_format(format_: str | None, as_json: bool) -> str | None:
    """`--json`, the option every command that prints a result takes, is `--format json` here."""
    if as_json and format_ not in (None, "json"):
        raise click.UsageError(f"--json and --format {format_}: choose one")
    return "json" if as_json else format_


@contextmanager
def unreadable_exits() -> Iterator[None]:
    """An input that cannot be read ends the command as `could_not` says."""
    try:
        yield
    except LlmproxyError as exc:
        could_not(str(exc))


def write_output(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8", newline="")
    except OSError as exc:
        could_not(f"cannot write {output}: {exc.strerror or exc}")


def could_not(message: str) -> NoReturn:
    """An input that cannot be read or an output that cannot be written: one line naming the command that
    runs (`llmproxy verify cost: error: …`), exit status 2."""
    click.echo(f"{usage.name_of(click.get_current_context(silent=True))}: error: {message}", err=True)
    raise SystemExit(2)
