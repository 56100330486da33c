"""Reports over committed cassettes, as `llmproxy report` builds them (paths relative to the repository), and
cassettes of crafted runs written by the recorder's own writer."""

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import orjson

from llmproxy.analysis.build import Selection, build_report, select
from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.report import Report
from llmproxy.analysis.sources import Grouping, Recorded
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from llmproxy.model.exchange import RawExchange
from llmproxy.pricing import PriceBook
from tests.cassette.factory import STARTED, exchange, request, response

ROOT = Path(__file__).resolve().parents[2]
SIGNAL_CASSETTES = ROOT / "cassettes" / "report"
CRAFTED_RUNS = tuple(sorted(str(path.relative_to(ROOT)) for path in SIGNAL_CASSETTES.glob("*.json")))
"""The crafted run of each signal and the clean run, one cassette each (a test suite's folder is beside them)."""


@contextmanager
def at_root() -> Iterator[None]:
    """Reports name their sources as given: relative to the repository, as a user in it would."""
    before = Path.cwd()
    os.chdir(ROOT)
    try:
        yield
    finally:
        os.chdir(before)


def report_of(*paths: str, grouping: Grouping = Grouping.CASSETTE, selection: Selection | None = None) -> Report:
    return run_of(*paths, grouping=grouping, selection=selection)[0]


def run_of(
    *paths: str, grouping: Grouping = Grouping.CASSETTE, selection: Selection | None = None
) -> tuple[Report, list[RecordedCall]]:
    """The report, and the calls it covers as its rows number them (row n is `calls[n - 1]`)."""
    book = PriceBook()
    selection = selection or Selection()
    with at_root():
        recorded = Recorded([Path(path) for path in paths], book, grouping)
        report = build_report(
            recorded.calls,
            recorded.sources,
            book=book,
            grouping=grouping,
            selection=selection,
            conversation=recorded.conversation,
        )
    return report, select(recorded.calls, selection)[0]


def recorded(path: Path, exchanges: Iterable[RawExchange]) -> str:
    """A cassette of these exchanges, written (and redacted) by the writer `llmproxy record --record-unanswered`
    uses: an exchange the upstream never answered is kept, as an outage recorded on purpose."""
    writer = CassetteWriter.open(path, Redactor(), keep_unanswered=True)
    writer.start()
    for item in exchanges:
        writer.add(item)
    writer.close()
    return str(path)


def question(
    number: int,
    *,
    usage: tuple[int, int] = (100, 50),
    status: int = 200,
    model: str = "claude-haiku-4-5",
    ask: str | None = None,
    text: str | None = None,
) -> RawExchange:
    """The `number`-th of a run of one-off questions to Claude, a second apart, each a different one (or
    `ask`): answered (`text`) with `usage` (input, output tokens), or refused with `status` (an Anthropic error
    body), or with `status` 0 never answered (the connection was refused)."""
    body = {"model": model, "max_tokens": 256, "messages": [{"role": "user", "content": ask or f"Question {number}?"}]}
    started_at = STARTED + timedelta(seconds=number)
    if status == 0:
        return exchange(request(body), None, "connection refused", started_at=started_at)
    if status >= 400:
        error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        return exchange(request(body), response(orjson.dumps(error), status=status), started_at=started_at)
    answer = {
        "id": f"msg_{number:05d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text if text is not None else f"Answer {number}."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }
    return exchange(request(body), response(orjson.dumps(answer)), started_at=started_at)
