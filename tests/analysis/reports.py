"""Reports over committed cassettes, as `llmproxy report` builds them (paths relative to the repository)."""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from llmproxy.analysis.build import Selection, build_report
from llmproxy.analysis.report import Report
from llmproxy.analysis.sources import Grouping, Recorded
from llmproxy.pricing import PriceBook

ROOT = Path(__file__).resolve().parents[2]
SIGNAL_CASSETTES = ROOT / "cassettes" / "report"


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
    book = PriceBook()
    with at_root():
        recorded = Recorded([Path(path) for path in paths], book, grouping)
        return build_report(
            recorded.calls,
            recorded.sources,
            book=book,
            grouping=grouping,
            selection=selection or Selection(),
            conversation=recorded.conversation,
        )
