"""`llmproxy cassette import` and `cassette export`: recordings of other tools in, cassettes out
(docs/import.md)."""

from pathlib import Path

import click

from llmproxy.errors import CassetteError
from llmproxy.options import option


@click.command("import")
@click.argument("paths", metavar="FILE|DIR...", nargs=-1, required=True, type=click.Path(path_type=Path))
@option(
    "-o", "--output", required=True, type=click.Path(path_type=Path), help="the cassette (a folder with --per-file)"
)
@option("--per-file", is_flag=True, help="One cassette per input file, in the folder -o names.")
@option("--keep-other", is_flag=True, help="Keep traffic to no LLM API too (as --record-all records it).")
@option("--rewrite", is_flag=True, help="Replace the cassette(s) instead of appending to them.")
@option(
    "--record-unanswered",
    is_flag=True,
    help="Keep requests that got no answer too (a HAR entry with status 0, a flow that failed), as record does.",
)
@option("--redact-field", multiple=True, metavar="NAME", help="Also redact JSON fields named NAME. Repeatable.")
def import_(
    paths: tuple[Path, ...],
    output: Path,
    per_file: bool,
    keep_other: bool,
    rewrite: bool,
    record_unanswered: bool,
    redact_field: tuple[str, ...],
) -> None:
    """Import vcrpy / pytest-recording cassettes, HAR files and mitmproxy flow files into a cassette.

    FILE|DIR are files (their format is read from their content) or folders (searched for *.yaml, *.yml,
    *.yaml.gz, *.yml.gz, *.json, *.har, *.flow, *.flows, *.mitm and *.dump). LLM exchanges are stored as
    `llmproxy record` would have stored them: redacted, decoded, streams cut into events; other traffic is
    dropped and counted unless --keep-other. Entries that cannot be read are skipped, counted and named.
    Appends to an existing cassette as a recording does (--rewrite replaces it). Nothing is written unless
    every file could be read; exits 2, with one line, when one cannot.
    """
    import logging

    from llmproxy import log_lines
    from llmproxy.cassette import redacted_logs
    from llmproxy.cassette.redact import Redactor
    from llmproxy.importing.formats import PATTERNS
    from llmproxy.importing.run import ImportOptions, import_each, import_files
    from llmproxy.inputs import expand_paths
    from llmproxy_addons.flow_files import read_flows  # mitmproxy's io: only here, only for flow files

    files = expand_paths(paths, PATTERNS)
    missing = [path for path in files if not path.is_file()]
    if missing:
        what = "no file to import in it" if missing[0].is_dir() else "no such file"
        click.echo(f"cannot import: {missing[0]}: {what}", err=True)
        raise SystemExit(2)
    redacted_logs.install()  # what the recorder warns of, as `record` says it: one redacted line each
    log_lines.to_stderr("llmproxy cassette import", logging.WARNING, debug=False)
    redactor = Redactor(frozenset(redact_field))
    run = import_each if per_file else import_files
    try:
        options = ImportOptions(read_flows, redactor, keep_other, rewrite, keep_unanswered=record_unanswered)
        summary = run(files, output, options)
    except CassetteError as exc:
        click.echo(f"cannot import: {exc}; nothing written", err=True)
        raise SystemExit(2) from None
    for line in summary.lines():
        click.echo(line, err=True)


@click.command("export")
@click.argument("path", metavar="CASSETTE", type=click.Path(path_type=Path))
@option(
    "--format",
    "form",
    type=click.Choice(["har", "vcrpy"]),
    help="what to write (default: from the output's name: .har is HAR, anything else a vcrpy cassette)",
)
@option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="the file to write")
def export(path: Path, form: str | None, output: Path) -> None:
    """Write a cassette as a HAR 1.2 file or a vcrpy cassette (YAML).

    Every exchange is written as it was recorded, its stream as one body holding the events, as those tools
    keep one; secrets stay redacted. Exits 2 when the cassette cannot be read or the output written.
    """
    from llmproxy.importing.export import export_cassette

    form = form or ("har" if output.suffix.lower() == ".har" else "vcrpy")
    try:
        exported = export_cassette(path, form, output)
    except CassetteError as exc:
        click.echo(f"cannot export: {exc}", err=True)
        raise SystemExit(2) from None
    click.echo(f"exported {exported} from {path} to {output} ({form})", err=True)
