"""`llmproxy cassette …`: tools for cassette files (no proxy, no mitmproxy import)."""

from pathlib import Path

import click

from llmproxy.cassette.check import check_file
from llmproxy.cli.output import emit, json_option
from llmproxy.errors import CassetteError
from llmproxy.words import plural


@click.group()
def cassette() -> None:
    """Inspect and convert cassette files."""


@cassette.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@json_option
def check(paths: tuple[Path, ...], as_json: bool) -> None:
    """Scan files for anything key-shaped that is not redacted.

    Prints FILE:WHERE: KIND: MASKED for each finding, and on stderr what was checked. Exits 0 when every
    file is clean, 1 when something was found, 2 when a file could not be read (a guard for CI and
    pre-commit hooks).
    """
    from llmproxy.outputs import check as output

    files: list[output.CheckedFile] = []
    for path in paths:
        try:
            result = check_file(path)
        except OSError as exc:
            error = exc.strerror or str(exc)
            click.echo(f"{path}: cannot read: {error}", err=True)
            files.append(output.unreadable(str(path), error))
            continue
        if not as_json:
            for finding in result.findings:
                click.echo(str(finding))
        click.echo(f"checked {result.describe()}: {_found(len(result.findings))}", err=True)
        files.append(output.checked(result))
    found = sum(len(file.findings) for file in files)
    unreadable = sum(file.error is not None for file in files)
    if len(files) > 1:
        read = plural(len(files) - unreadable, "file")
        click.echo(f"checked {read}{f', {unreadable} unreadable' if unreadable else ''}: {_found(found)}", err=True)
    if as_json:
        emit(output.CassetteCheck(clean=not (found or unreadable), findingCount=found, files=files))
    raise SystemExit(2 if unreadable else 1 if found else 0)


def _found(count: int) -> str:
    return f"{plural(count, 'secret-looking value')} found" if count else "no secret-looking values"


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
