"""`llmproxy cassette …`: tools for cassette files (no proxy, no mitmproxy import)."""

from pathlib import Path

import click

from llmproxy.cassette.check import check_file


@click.group()
def cassette() -> None:
    """Inspect cassette files."""


@cassette.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
def check(paths: tuple[Path, ...]) -> None:
    """Scan files for anything key-shaped that is not redacted.

    Prints FILE:WHERE: KIND: MASKED for each finding. Exits 0 when every file is clean, 1 when something
    was found, 2 when a file could not be read (a guard for CI and pre-commit hooks).
    """
    found = unreadable = 0
    for path in paths:
        try:
            findings = check_file(path)
        except OSError as exc:
            click.echo(f"{path}: cannot read: {exc.strerror or exc}", err=True)
            unreadable += 1
            continue
        for finding in findings:
            click.echo(str(finding))
        found += len(findings)
    if found:
        click.echo(f"{found} secret-looking value{'s' if found != 1 else ''} found", err=True)
    raise SystemExit(2 if unreadable else 1 if found else 0)
