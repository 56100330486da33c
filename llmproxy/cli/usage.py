"""How the command line says it cannot work as written: one line in llmproxy's voice on stderr, exit status
2 — `llmproxy replay: error: no such option --casette (did you mean --cassette?)` — instead of click's block
of usage, hint and error.

A misspelt option or command is matched against the real ones without their leading dashes. difflib, as
click calls it, compares `--casette` with `--seed` and finds them close for the two dashes they share, so
click suggested `--seed` and `--state` beside `--cassette`.
"""

import difflib
from collections.abc import Iterable
from typing import IO, Any

import click

from llmproxy.cli.options import Repeated

CUTOFF = 0.6  # difflib's own: how alike a name must be to be suggested at all
MARGIN = 0.1  # a second (or third) suggestion only when it is nearly as close as the best


def closest(typed: str, names: Iterable[str]) -> list[str]:
    """The names most like `typed` (at most three, the best first), compared without their leading dashes."""
    bare = {name.lstrip("-"): name for name in names}
    word = typed.lstrip("-")
    scored = sorted(
        ((difflib.SequenceMatcher(None, word, candidate).ratio(), candidate) for candidate in bare),
        key=lambda pair: -pair[0],
    )
    best = scored[0][0] if scored else 0.0
    return [bare[candidate] for ratio, candidate in scored[:3] if ratio >= max(CUTOFF, best - MARGIN)]


def describe(error: click.UsageError) -> str:
    """The error as one clause: `no such option --casette (did you mean --cassette?)`,
    `missing option '--cassette'`."""
    ctx = error.ctx
    if isinstance(error, click.NoSuchOption):
        names = _option_names(ctx.command, ctx) if ctx is not None else error.possibilities or []
        return f"no such option {error.option_name}{_suggestion(closest(error.option_name, names))}"
    if isinstance(error, click.exceptions.NoSuchCommand) and ctx is not None:
        group = ctx.command
        names = group.list_commands(ctx) if isinstance(group, click.Group) else []
        return f"no such command {error.command_name!r}{_suggestion(closest(error.command_name, names))}"
    text = error.format_message().strip()
    return (text[:1].lower() + text[1:]).removesuffix(".")


def name_of(ctx: click.Context | None) -> str:
    """`llmproxy replay`, `llmproxy verify cost`: the command as a user typed it, whatever the program was
    called (`python -m llmproxy`)."""
    if ctx is None:
        return "llmproxy"
    _, _, rest = ctx.command_path.partition(" ")
    return f"llmproxy {rest}".rstrip()


class OneLine(click.UsageError):
    """A usage error shown as one line naming the command, with where to read its options."""

    def __init__(self, error: click.UsageError) -> None:
        super().__init__(describe(error), error.ctx)
        self.hint = not isinstance(error, Repeated) and "did you mean" not in self.message

    def show(self, file: IO[Any] | None = None) -> None:
        command = name_of(self.ctx)
        hint = f" (see {command} --help)" if self.hint else ""
        click.echo(f"{command}: error: {self.message}{hint}", file=file, err=file is None)


def _option_names(command: click.Command, ctx: click.Context) -> list[str]:
    options = (param for param in command.get_params(ctx) if isinstance(param, click.Option))
    return [name for option in options for name in option.opts + option.secondary_opts]


def _suggestion(names: list[str]) -> str:
    return f" (did you mean {' or '.join(names)}?)" if names else ""
