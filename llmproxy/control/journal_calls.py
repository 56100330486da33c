"""The journal read as `llmproxy report`, `explain` and `verify` read cassettes: its entries' exchanges —
redacted, in the shape a cassette stores them — given to the same builder (`llmproxy.analysis.sources.Recorded`),
the requests of each test (`x-llmproxy-test-id`) as a cassette of their own, as one cassette per test makes the
report's sessions per test."""

import threading
from collections.abc import Sequence
from typing import Final

from llmproxy.analysis.sources import Grouping, Recorded
from llmproxy.cassette.model import Exchange
from llmproxy.control.router import ApiError
from llmproxy.journal import Entry, Journal, Query, Source
from llmproxy.pricing import PriceBook

JOURNAL: Final = "journal"  # the name the journal's requests sent without a test id go by, as a cassette's path
ANSWERED: Final = frozenset({Source.LIVE, Source.REPLAYED, Source.MOCKED, Source.INJECTED, Source.CASSETTE})
"""The exchanges a model (or a fault in its place) answered, or a cassette at rest holds: a miss, llmproxy's own
failure and a CLI's background traffic are left out of what is judged unless asked for by their source."""


def kept_journal(journal: Journal | None) -> Journal:
    """The run's journal, for an endpoint that reads it: 404 when the run keeps none (`--journal-size 0`)."""
    if journal is None:
        raise ApiError(404, "this run keeps no journal")
    return journal


def source_name(test_id: str | None) -> str:
    """The name a test's requests go by in a report (its `sources` and, grouped per test, its sessions)."""
    return JOURNAL if test_id is None else f"{JOURNAL}:{test_id}"


def answered(journal: Journal, source: Source | None, test_id: str | None, since: int = 0) -> list[Entry]:
    """The entries to judge, oldest first: those answered `source` (None: every answered one), of `test_id`,
    numbered after `since`."""
    entries = journal.read(Query(source=source, test_id=test_id, since=since))
    return entries if source is not None else [entry for entry in entries if entry.source in ANSWERED]


def recorded(entries: Sequence[Entry], book: PriceBook, grouping: Grouping = Grouping.CASSETTE) -> Recorded:
    """The calls of `entries`, each test's read as one cassette; a call's `exchange_id` is its entry's `seq`."""
    by_test: dict[str, list[Exchange]] = {}
    for entry in entries:
        by_test.setdefault(source_name(entry.test_id), []).append(entry.exchange)
    return Recorded.of_exchanges(by_test.items(), book, grouping)


class Reader:
    """The price data, loaded the first time something is priced (it takes a moment), and the calls last read
    from the journal: a verify of the same entries as the one before it (a test's gates one after another,
    nothing new in the journal) reads none of them again. One read is kept, so memory holds at most one."""

    def __init__(self) -> None:
        self._book: PriceBook | None = None
        self._last: tuple[tuple[object, ...], Recorded] | None = None
        self._lock = threading.Lock()

    @property
    def book(self) -> PriceBook:
        if self._book is None:
            self._book = PriceBook()
        return self._book

    def read(
        self,
        journal: Journal,
        source: Source | None,
        test_id: str | None,
        since: int = 0,
        grouping: Grouping = Grouping.CASSETTE,
    ) -> Recorded:
        """The calls of the entries `answered` chooses. The journal holds a run of entries ending at its `last`,
        `kept` long, so the two name what it holds; taken before the entries are, they can only be older than
        what is read, and the next read then reads afresh."""
        key = (source, test_id, since, grouping, journal.last, journal.kept)
        with self._lock:
            if self._last is not None and self._last[0] == key:
                return self._last[1]
        read = recorded(answered(journal, source, test_id, since), self.book, grouping)
        with self._lock:
            self._last = (key, read)
        return read
