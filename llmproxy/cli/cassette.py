"""`llmproxy cassette …`: tools for cassette files (no proxy, no mitmproxy import)."""

from pathlib import Path
from typing import TYPE_CHECKING

import click

from llmproxy.cassette.check import check_file
from llmproxy.cli.cassette_transfer import export, import_
from llmproxy.cli.output import emit, json_option
from llmproxy.errors import CassetteError
from llmproxy.options import option
from llmproxy.words import plural

if TYPE_CHECKING:
    from llmproxy.outputs.check import Undecoded


@click.group()
def cassette() -> None:
    """Inspect and convert cassette files."""


cassette.add_command(import_)
cassette.add_command(export)


@cassette.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@option(
    "--decode", is_flag=True, help="Also list every LLM exchange whose request or answer llmproxy's codecs cannot read."
)
@json_option
def check(paths: tuple[Path, ...], decode: bool, as_json: bool) -> None:
    """Scan files for anything key-shaped that is not redacted, and that each is what it claims to be.

    PATHS are files, folders (searched for *.json and *.journal) or globs. Prints FILE:WHERE: KIND: MASKED
    for each finding, and on stderr what was checked. With --decode, each
    cassette's LLM exchanges are also decoded as llmproxy reads them (for reports, mocks and
    to-expectations), and each that does not is listed: FILE: exchange N: API part: what and where: the
    first 200 characters. Exits 0 when every file is clean, 1 when something was found, 2 when a file could
    not be read or checked — a cassette or journal cut short, corrupt, of another version, with merge
    conflict markers — one line each (a guard for CI and pre-commit hooks).
    """
    from llmproxy.outputs import check as output

    files: list[output.CheckedFile] = []
    for path in _checked_files(paths):
        if path.is_dir():
            click.echo(f"{path}: cannot check: no .json or .journal file in it", err=True)
            files.append(output.unreadable(str(path), "no .json or .journal file in it"))
            continue
        try:
            result = check_file(path)
        except (OSError, CassetteError) as exc:
            error = exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)
            click.echo(f"{path}: {'cannot read' if isinstance(exc, OSError) else 'cannot check'}: {error}", err=True)
            files.append(output.unreadable(str(path), error))
            continue
        if not as_json:
            for finding in result.findings:
                click.echo(str(finding))
        click.echo(f"checked {result.describe()}: {_found(len(result.findings))}", err=True)
        checked = output.checked(result)
        if decode and result.kind == "cassette":
            try:
                checked = checked.model_copy(update={"undecoded": _undecoded(path, as_json)})
            except CassetteError as exc:
                click.echo(str(exc), err=True)
                checked = checked.model_copy(update={"error": str(exc)})
        files.append(checked)
    found = sum(len(file.findings) for file in files)
    unreadable = sum(file.error is not None for file in files)
    undecoded = sum(len(file.undecoded or ()) for file in files)
    if len(files) > 1:
        read = plural(len(files) - unreadable, "file")
        click.echo(f"checked {read}{f', {unreadable} unreadable' if unreadable else ''}: {_found(found)}", err=True)
    if undecoded:
        click.echo(f"{plural(undecoded, 'exchange')} that llmproxy cannot decode", err=True)
    if as_json:
        clean = not (found or unreadable or undecoded)
        emit(output.CassetteCheck(clean=clean, findingCount=found, files=files))
    raise SystemExit(2 if unreadable else 1 if found or undecoded else 0)


def _checked_files(paths: tuple[Path, ...]) -> list[Path]:
    """The files named, folders searched and globs expanded as `report` and `verify` do, for cassettes and
    journals; a folder with none in it stays, to be said so (checking nothing is not clean)."""
    from llmproxy.inputs import expand_paths

    files = []
    for path in paths:
        files += expand_paths([path], ("*.json", "*.journal")) or [path]
    return list(dict.fromkeys(files))


def _undecoded(path: Path, as_json: bool) -> list["Undecoded"]:
    """The exchanges of one cassette that do not decode (printed unless the output is JSON)."""
    from llmproxy.cassette.audit import audit_stored
    from llmproxy.cassette.store import load_cassette
    from llmproxy.outputs.check import Undecoded

    listed = []
    for exchange in load_cassette(path).exchanges:
        result = audit_stored(exchange)
        if result is None:
            continue
        for failure in result.failures:
            api, part, excerpt = result.label, failure.part, failure.excerpt
            listed.append(
                Undecoded(
                    exchange=exchange.id, api=api, part=part, error=failure.message, path=failure.path, excerpt=excerpt
                )
            )
            if not as_json:
                click.echo(f"{path}: exchange {exchange.id}: {api} {failure}")
    return listed


@cassette.command()
@click.argument("paths", metavar="FILE...", nargs=-1, required=True, type=click.Path(path_type=Path))
def compact(paths: tuple[Path, ...]) -> None:
    """Rewrite cassettes so that what their requests repeat is stored once.

    Each FILE is written again as a recording writes it now: system prompts, instructions and each tool
    definition stored once as a shared part, any large value that recurs too; every reader sees the same
    exchanges as before. Each file is replaced atomically, under its recording lock. Prints each file's size
    before and after; exits 2 when a file cannot be compacted (missing, unreadable, being recorded, with a
    journal a killed recording left), one line each.
    """
    from llmproxy.cassette.store import compact_cassette

    failed = 0
    for path in paths:
        try:
            before, after = compact_cassette(path)
        except CassetteError as exc:
            click.echo(f"cannot compact: {exc}", err=True)
            failed += 1
            continue
        if before == after:
            click.echo(f"{path}: {before:,} bytes, already compact")
        else:
            click.echo(f"{path}: {before:,} → {after:,} bytes ({after / before:.0%})")
    raise SystemExit(2 if failed else 0)


def _found(count: int) -> str:
    return f"{plural(count, 'secret-looking value')} found" if count else "no secret-looking values"


@cassette.command("to-expectations")
@click.argument("path", metavar="CASSETTE", type=click.Path(path_type=Path))
@option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="default: stdout")
def to_expectations(path: Path, output: Path | None) -> None:
    """Turn a cassette's chat sessions, MCP servers and A2A agents into an expectations file for `llmproxy mock`.

    One conversation per recorded session, one turn per recorded chat exchange, answering as the recording
    did; the MCP servers and A2A agents it talked to as mcpServers and a2aAgents; other traffic is skipped.
    Says on stderr what was written and skipped. Exits 2 when the cassette cannot be read or the output cannot
    be written.
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
