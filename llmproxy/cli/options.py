"""Options given more than once. click keeps the last value of an option given twice without a word, so
`--fail 500@0.3 --fail 429@0.05` injected only 429s. Every option of every command is made here, and is one
of two kinds:

* one a user may mean several of (`--fail`, `--map`, `--route`, `--allow-host`…) is `multiple`: each one adds;
* one that can hold a single value (`--seed`, `--port`, `--budget-usd`…) refuses a second, different one,
  naming both: `--seed given twice: 1 and 2`; `--live` with `--no-live` likewise. A flag or a value given
  twice alike says the same thing twice, and is taken.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click
from click.core import ParameterSource
from click.decorators import FC


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
