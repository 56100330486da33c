"""`llmproxy cassette …`: tools for cassette files (no proxy, no mitmproxy import)."""

from pathlib import Path

import click

from llmproxy.cassette.check import check_file
from llmproxy.errors import CassetteError


@click.group()
def cassette() -> None:
    """Inspect and convert cassette files."""


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


@cassette.command("to-expectations")
@click.argument("path", metavar="CASSETTE", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="default: stdout")
def to_expectations(path: Path, output: Path | None) -> None:
    """Turn a cassette's chat sessions into an expectations file for `llmproxy mock`.

    One conversation per recorded session, one turn per recorded chat exchange, answering as the recording
    did; other traffic is skipped. Says on stderr what was written and skipped. Exits 2 when the cassette
    cannot be read or the output cannot be written.
    """
    from llmproxy.cassette.store import load_cassette
    from llmproxy.mock.from_cassette import convert, dumps

    try:
        conversion = convert(load_cassette(path))
    except CassetteError as exc:
        click.echo(str(exc), err=True)
        raise SystemExit(2) from None
    data = dumps(conversion.expectations)
    if output is None:
        click.echo(data, nl=False)
    else:
        try:
            output.write_bytes(data)
        except OSError as exc:
            click.echo(f"{output}: cannot write: {exc.strerror or exc}", err=True)
            raise SystemExit(2) from None
    click.echo(conversion.report(str(output or "stdout")), err=True)
