"""`--json`: the option every command that reports something takes, and printing its document.

With `--json`, stdout holds one JSON document (`llmproxy.outputs`) and nothing else; what a human reads
still goes to stderr. Without it, nothing changes.
"""

from collections.abc import Callable
from typing import Any

import click

from llmproxy.options import option
from llmproxy.outputs import Document, dumps

json_option: Callable[[Callable[..., Any]], Callable[..., Any]] = option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document on stdout (schema: docs/json-output.md).",
)


def emit(document: Document) -> None:
    click.echo(dumps(document))
