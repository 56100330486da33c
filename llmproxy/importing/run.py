"""An import: other tools' recordings written as one cassette, or one cassette per file, by the recorder's own
writer (`CassetteWriter`: redaction, conversion, stream events, shared histories, the decode audit), so an
imported exchange is stored exactly as if llmproxy had recorded it.

LLM exchanges are kept by the rule `llmproxy record` keeps them by (`RecordScope`); other traffic is dropped and
counted, or kept as `--record-all` keeps it. An entry that cannot be read is skipped, counted and named (file
and index or line). Nothing is written until every file has been read: the cassette is written beside its
destination and put in place at the end (atomically, as a recording is), and a file that cannot be read at all
stops the import with the destination untouched.
"""

import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, RecordSummary
from llmproxy.errors import CassetteError
from llmproxy.importing.entries import Entry, UnreadableError
from llmproxy.importing.formats import FlowReader, output_name, read_entries
from llmproxy.model.exchange import RawExchange
from llmproxy.record_scope import RecordScope
from llmproxy.words import plural


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """How an import reads and keeps: `read_flows` reads mitmproxy flow files (the core never imports
    mitmproxy), `keep_other` keeps traffic to no LLM API, `rewrite` replaces the cassette(s) instead of
    appending, `keep_unanswered` keeps requests that got no answer (as `llmproxy record`'s options do)."""

    read_flows: FlowReader
    redactor: Redactor
    keep_other: bool = False
    rewrite: bool = False
    keep_unanswered: bool = False


@dataclass(slots=True)
class ImportSummary:
    """What an import read, wrote, dropped and skipped, for its closing lines."""

    files: int = 0
    dropped: Counter[str] = field(default_factory=Counter)  # host → other requests not kept
    broken: list[str] = field(default_factory=list)  # "file: entry 3: why"
    written: list[RecordSummary] = field(default_factory=list)

    def lines(self, listed: int = 20) -> list[str]:
        lines = []
        for summary in self.written:
            if summary.untouched:
                fate = "is as it was" if summary.path.exists() else "is not written"
                lines.append(f"imported nothing: {summary.path} {fate}")
            else:
                lines += str(summary).replace("recorded ", "imported ", 1).splitlines()
        if self.dropped:
            hosts = ", ".join(f"{host} {count}" for host, count in self.dropped.most_common(5))
            more = ", …" if len(self.dropped) > 5 else ""
            total = plural(self.dropped.total(), "request")
            lines.append(f"dropped {total} to no LLM API ({hosts}{more}): --keep-other keeps them")
        if self.broken:
            lines.append(f"skipped {plural(len(self.broken), 'entry', 'entries')} that could not be read:")
            lines += [f"  {what}" for what in self.broken[:listed]]
            if len(self.broken) > listed:
                lines.append(f"  … and {len(self.broken) - listed} more")
        return lines


def import_files(files: Sequence[Path], output: Path, options: ImportOptions) -> ImportSummary:
    """Every file's exchanges into one cassette, appended to what `output` holds (replacing it with `rewrite`).
    Raises CassetteError (nothing written) when a file cannot be read, or the cassette cannot be written."""
    summary = ImportSummary(files=len(files))
    scope = RecordScope.of(everything=options.keep_other)
    writer = CassetteWriter.open(
        output, options.redactor, rewrite=options.rewrite, pending=True, keep_unanswered=options.keep_unanswered
    )
    kept = 0
    try:
        for path in files:
            kept += _write(writer, read_entries(path, options.read_flows), scope, summary)
    except (UnreadableError, OSError) as exc:
        writer.close()  # never started: the cassette stays as it was
        raise CassetteError(_reason(exc)) from None
    except BaseException:
        writer.close()
        raise
    if kept:  # an import of nothing leaves the cassette as it was, or unwritten
        writer.mark_started()
    summary.written.append(writer.close())
    return summary


def import_each(files: Sequence[Path], folder: Path, options: ImportOptions) -> ImportSummary:
    """Each file into a cassette of its own in `folder`, named after it (``test_chat.yaml`` →
    ``test_chat.json``). Every cassette is written in a folder beside them, and all are moved in place once
    every file was read. Raises CassetteError, with nothing written, when a file cannot be read, two files
    would make the same cassette, or a cassette exists already (unless `rewrite`)."""
    targets = {path: folder / output_name(path) for path in files}
    clashes = [target for target, count in Counter(targets.values()).items() if count > 1]
    if clashes:
        raise CassetteError(f"two input files would both be imported to {clashes[0]}: import them separately")
    existing = [target for target in targets.values() if target.exists()]
    if existing and not options.rewrite:
        raise CassetteError(f"{existing[0]} exists: --rewrite replaces it")
    if folder.exists() and not folder.is_dir():
        raise CassetteError(f"--per-file writes a folder of cassettes, and {folder} is a file")
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        staging = Path(_staging(folder))
    except OSError as exc:
        raise CassetteError(f"cannot write to {folder}: {exc.strerror or exc}") from None
    summary = ImportSummary(files=len(files))
    try:
        for path, target in targets.items():
            staged = staging / target.name
            one = import_files([path], staged, replace(options, rewrite=False))  # staged: each is new
            summary.dropped += one.dropped
            summary.broken += one.broken
            for written in one.written:
                written.path = target
                summary.written.append(written)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if created:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    for target in targets.values():
        if (staging / target.name).exists():
            (staging / target.name).replace(target)
    shutil.rmtree(staging, ignore_errors=True)
    return summary


def _staging(folder: Path) -> str:
    return tempfile.mkdtemp(prefix=".llmproxy-import-", dir=folder)


def _write(writer: CassetteWriter, entries: Iterable[Entry], scope: RecordScope, summary: ImportSummary) -> int:
    """How many exchanges were handed to the writer."""
    kept = 0
    for entry in entries:
        if entry.exchange is None:
            summary.broken.append(f"{entry.where}: {entry.problem}")
        elif _kept(entry.exchange, scope):
            writer.write(entry.exchange)
            kept += 1
        else:
            summary.dropped[entry.exchange.request.host] += 1
    return kept


def _kept(exchange: RawExchange, scope: RecordScope) -> bool:
    request = exchange.request
    headers = {name.lower(): value for name, value in request.headers}
    return scope.includes(request.host, request.path, headers, request.method)


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}cannot read: {exc.strerror or exc}"
    return str(exc)
