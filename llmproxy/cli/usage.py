"""How the command line says it cannot work as written: one line in llmproxy's voice on stderr, exit status
2 — `llmproxy replay: error: no such option --casette (did you mean --cassette?)` — instead of click's block
of usage, hint and error.

The error itself is said by `llmproxy.options.describe`, which the pytest marker's chaos options share.
"""

from typing import IO, Any

import click

from llmproxy.options import Repeated, describe


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
