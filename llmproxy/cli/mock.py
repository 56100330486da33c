"""`llmproxy mock`: scripted answers from an expectations file, in each provider's wire format, offline."""

import sys
from pathlib import Path
from typing import Any

import click

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import MatchOptions
from llmproxy.cli.output import emit, json_option
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
from llmproxy.errors import LlmproxyError
from llmproxy.options import option


class _MockGroup(click.Group):
    """`llmproxy mock [OPTIONS] [-- CMD…]` runs the mock (the hidden `run` subcommand); `llmproxy mock validate
    FILE` checks a file."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in (*self.commands, "-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[OPTIONS] [-- CMD ARGS…]")
        formatter.write_usage(ctx.command_path, "validate FILE", prefix="   or: ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """`mock --help` lists the options of the mock itself (`run`'s), which is what a user runs."""
        run_command = self.commands["run"]
        params = [param for param in run_command.get_params(ctx) if isinstance(param, click.Option)]
        rows = [row for param in params if (row := param.get_help_record(ctx)) is not None]
        with formatter.section("Options"):
            formatter.write_dl(rows)
        self.format_commands(ctx, formatter)


class _AsMock(click.Context):
    """The run's context is named as the user typed it, `llmproxy mock`, in its usage and its errors."""

    @property
    def command_path(self) -> str:
        return self.parent.command_path if self.parent is not None else super().command_path


class _Run(click.Command):
    context_class = _AsMock


@click.group(cls=_MockGroup)
def mock() -> None:
    """Serve scripted LLM answers: `llmproxy mock --expectations FILE [-- CMD ARGS…]`.

    Expectations answer first, then a cassette given with --cassette (replay's rules); nothing reaches the
    network, and a request nothing answers gets its API's invalid-request error (400) with the closest
    expectation and why it did not match. Without --expectations only the cassette, the CLIs' background
    traffic and chaos (--fail…) answer. `llmproxy mock validate FILE` checks a file without starting anything.
    """


@mock.command(cls=_Run, hidden=True, context_settings={"allow_interspersed_args": False})
@option(
    "--expectations",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The expectations file (JSON; docs/mock.md).",
)
@option(
    "--cassette",
    "cassettes",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also answer from this cassette when no expectation matches (repeatable).",
)
@preset_option(
    "For the cassette: ignore what this client varies between runs (default: the default preset and the"
    " client's, from its User-Agent; `default`: the default preset alone; `none`: compare as sent)."
)
@miss_status_option("The status of a request nothing answers.")
@strict_background_option
@option("--log", "log", type=click.Path(dir_okay=False, path_type=Path), help="Write the request log here.")
@background_host_option
@redact_field_option
@proxy_options
@reported("mock")
def run(
    expectations: Path | None,
    cassettes: tuple[Path, ...],
    preset: str | None,
    miss_status: int | None,
    strict_background: bool,
    log: Path | None,
    background_host: tuple[str, ...],
    redact_field: tuple[str, ...],
    **serving: Any,
) -> int:
    """Serve the expectations (what `llmproxy mock …` runs)."""
    from llmproxy.plan import mock_plan
    from llmproxy.session import Session

    options = ServeOptions(**serving)
    configure_logging("mock", options.verbose, options.debug)
    listening = options.listening()
    plan = mock_plan(
        expectations,
        cassettes=cassettes,
        match=MatchOptions(preset),
        miss_status=miss_status,
        strict_background=strict_background,
        log=log,
        base_url_port=options.base_url_port,
        redactor=Redactor(frozenset(redact_field)),
        background_hosts=background_host,
        routes=options.routes,
        intercept=options.intercept(),
    )
    if options.explain_chain:
        return explain("mock", options.journaled(plan))
    return serve("mock", options, Session.of(options.planned(plan)), listening, lambda run: run.strict_misses)


@mock.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@json_option
def validate(file: Path, as_json: bool) -> None:
    """Check an expectations file (and the scripts it names) without starting anything."""
    from llmproxy.mock.load import load_expectations
    from llmproxy.outputs import validate as output

    try:
        document = output.validation(str(file), load_expectations(file))
    except LlmproxyError as error:
        click.echo(str(error), err=True)
        document = output.invalid(str(file), str(error))
    else:
        click.echo(output.describe(document), err=as_json)
    if as_json:
        emit(document)
    sys.exit(0 if document.valid else 1)
