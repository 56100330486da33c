"""Command-line options as llmproxy reads them — the commands' (`llmproxy.cli`), and the chaos options the
pytest marker reads too — and what a usage error says, as one clause.

Options given more than once. click keeps the last value of an option given twice without a word, so
`--fail 500@0.3 --fail 429@0.05` injected only 429s. Every option of every command is made here, and is one
of two kinds:

* one a user may mean several of (`--fail`, `--map`, `--route`, `--allow-host`…) is `multiple`: each one adds;
* one that can hold a single value (`--seed`, `--port`, `--budget-usd`…) refuses a second, different one,
  naming both: `--seed given twice: 1 and 2`; `--live` with `--no-live` likewise. A flag or a value given
  twice alike says the same thing twice, and is taken.

A misspelt option or command is matched against the real ones without their leading dashes. difflib, as
click calls it, compares `--casette` with `--seed` and finds them close for the two dashes they share, so
click suggested `--seed` and `--state` beside `--cassette`.
"""

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import click
from click.core import ParameterSource
from click.decorators import FC

type Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def option(*names: str, **settings: Any) -> Callable[[FC], FC]:
    """`click.option`, given at most once unless `multiple` (`Once`)."""
    return click.option(*names, cls=Once, **settings)


class Repeated(click.UsageError):
    """A value given twice where one can hold: the message names both, which is all there is to say."""


class Once(click.Option):
    """An option that refuses a second, different value; `multiple` and counted ones (`-vv`) add up."""

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        """The parser appends each value given, instead of keeping the last, so that a repeat can be seen."""
        if self.multiple or self.count or (self.is_flag and not self.secondary_opts):
            super().add_to_parser(parser, ctx)
        elif self.is_flag:  # --live/--no-live
            parser.add_option(obj=self, opts=self.opts, dest=self.name, action="append_const", const=True)
            parser.add_option(obj=self, opts=self.secondary_opts, dest=self.name, action="append_const", const=False)
        else:
            parser.add_option(obj=self, opts=self.opts, dest=self.name, action="append", nargs=self.nargs)

    def consume_value(self, ctx: click.Context, opts: Mapping[str, Any]) -> tuple[Any, ParameterSource]:
        given = opts.get(self.name or "")
        if isinstance(given, list) and not (self.multiple or self.count):
            if len(set(given)) > 1:
                raise Repeated(self._repeated(given), ctx)
            opts = {**opts, self.name or "": given[0]}
        return super().consume_value(ctx, opts)

    def _repeated(self, values: Sequence[Any]) -> str:
        if self.is_flag:
            return f"{self.opts[-1]} and {self.secondary_opts[-1]}: choose one"
        name = max(self.opts, key=len)
        shown = [" ".join(value) if isinstance(value, tuple) else str(value) for value in values]
        times = "twice" if len(shown) == 2 else f"{len(shown)} times"
        return f"{name} given {times}: {', '.join(shown[:-1])} and {shown[-1]}"


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


def _option_names(command: click.Command, ctx: click.Context) -> list[str]:
    options = (param for param in command.get_params(ctx) if isinstance(param, click.Option))
    return [name for option in options for name in option.opts + option.secondary_opts]


def _suggestion(names: list[str]) -> str:
    return f" (did you mean {' or '.join(names)}?)" if names else ""
