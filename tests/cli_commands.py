"""Every command of the `llmproxy` command line, for tests that hold each of them to a rule."""

import importlib
from collections.abc import Iterator

import click

from llmproxy.cli import COMMANDS


def commands() -> Iterator[tuple[list[str], click.Command]]:
    """Every command a user can run, as the words that run it, in order (`mock`'s hidden `run` is `mock`)."""

    def walk(command: click.Command, words: list[str]) -> Iterator[tuple[list[str], click.Command]]:
        if isinstance(command, click.Group):
            for name, sub in sorted(command.commands.items()):
                yield from walk(sub, words if (words, name) == (["mock"], "run") else [*words, name])
        else:
            yield words, command

    for name, (module, attribute, _) in sorted(COMMANDS.items()):
        yield from walk(getattr(importlib.import_module(module), attribute), [name])
