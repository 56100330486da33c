"""The journal read as `llmproxy report`, `explain` and `verify` read cassettes: its entries' exchanges —
redacted, in the shape a cassette stores them — given to the same builder (`llmproxy.analysis.sources.Recorded`),
the requests of each test (`x-llmproxy-test-id`) as a cassette of their own, as one cassette per test makes the
report's sessions per test. The tool-call and cost gates read less (`answered`): each exchange's model, usage
and tool calls from its capture (`llmproxy.analysis.answered`), the few that need more read whole as above."""

import threading
from collections.abc import Sequence
from typing import Final

from llmproxy.analysis.answered import AnsweredCall, Known, answered_call
from llmproxy.analysis.build import oldest_first
from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.sources import Grouping, Recorded, SourceSummary
from llmproxy.cassette.model import Exchange
from llmproxy.cassette.store import gc_paused
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
    """The name a test's requests go by in a report (its `sources`, its sessions, and its conversations' names
    before their first call's number): the test id, as the test's own cassette is named after it (and a cassette
    at rest, its path, as `llmproxy report` names it); `journal` for the requests sent without one."""
    return JOURNAL if test_id is None else test_id


def answered(journal: Journal, source: Source | None, test_id: str | None, since: int = 0) -> list[Entry]:
    """The entries to judge, oldest first: those answered `source` (None: every answered one), of `test_id`,
    numbered after `since`."""
    entries = journal.read(Query(source=source, test_id=test_id, since=since))
    return entries if source is not None else [entry for entry in entries if entry.source in ANSWERED]


def recorded(entries: Sequence[Entry], book: PriceBook, grouping: Grouping = Grouping.CASSETTE) -> Recorded:
    """The calls of `entries`, each test's read as one cassette; a call's `exchange_id` is its entry's `seq`."""
    by_test: dict[str, list[Exchange]] = {}
    with gc_paused():  # what is read of each exchange lives on in the calls: the collector's passes are waste
        for entry in entries:
            by_test.setdefault(source_name(entry.test_id), []).append(entry.converted())
    return Recorded.of_exchanges(by_test.items(), book, grouping)


class Answered:
    """The calls the tool-call and cost gates judge, oldest first (`build.select`'s order), and what each test's
    exchanges held, as `Recorded` gives them."""

    def __init__(self, calls: list[AnsweredCall | RecordedCall], sources: list[SourceSummary]) -> None:
        self.calls = calls
        self.sources = sources


def answered_calls(entries: Sequence[Entry], book: PriceBook, tool_calls: bool = True) -> Answered:
    """The calls of `entries` as `recorded` reads them, for the gates that judge answers alone: each exchange
    read for its model, usage and tool calls (`answered_call`). A test with an exchange only the whole reading
    can read is read whole, as one cassette: what that reading makes of one exchange may depend on the test's
    earlier ones (an answer without usage is estimated from the history the request shares with them).
    `tool_calls` False: a JSON answer's tool calls are not read (the cost gate judges the usage alone)."""
    by_test: dict[str, tuple[SourceSummary, list[AnsweredCall]] | None] = {}  # None: read whole
    entries_of: dict[str, list[Entry]] = {}
    known: Known = {}
    with gc_paused():  # what is read lives on until the verify answers: the collector's passes are waste
        for entry in entries:
            name = source_name(entry.test_id)
            entries_of.setdefault(name, []).append(entry)
            if name not in by_test:
                by_test[name] = (SourceSummary(name), [])
            read_so_far = by_test[name]
            if read_so_far is None:
                continue
            summary, found = read_so_far
            read = answered_call(entry.seen(), entry.seq, name, entry.redactor, book, entry.captured, tool_calls, known)
            if read is None:
                by_test[name] = None
                continue
            summary.exchanges += 1
            if isinstance(read, str):
                summary.skipped[read] += 1
            else:
                summary.calls += 1
                found.append(read)
    whole = [entry for name, fast in by_test.items() if fast is None for entry in entries_of[name]]
    rest = recorded(whole, book) if whole else None
    sources: list[SourceSummary] = []
    calls: list[AnsweredCall | RecordedCall] = [*rest.calls] if rest is not None else []
    read_whole = {summary.path: summary for summary in rest.sources} if rest is not None else {}
    for name, fast in by_test.items():
        if fast is None:
            sources.append(read_whole[name])
        else:
            sources.append(fast[0])
            calls.extend(fast[1])
    calls.sort(key=oldest_first)
    return Answered(calls, sources)


class Reader:
    """The price data, loaded the first time something is priced (it takes a moment), and the calls last read
    from the journal: a verify of the same entries as the one before it (a test's gates one after another,
    nothing new in the journal) reads none of them again. One read is kept, so memory holds at most one."""

    def __init__(self) -> None:
        self._book: PriceBook | None = None
        self._last: tuple[tuple[object, ...], Recorded | Answered] | None = None
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
        """The calls of the entries `answered` chooses, read whole (`recorded`)."""
        key = (Recorded, source, test_id, since, grouping, *self._holding(journal))
        kept = self._kept(key)
        if isinstance(kept, Recorded):
            return kept
        read = recorded(answered(journal, source, test_id, since), self.book, grouping)
        self._keep(key, read)
        return read

    def answers(
        self, journal: Journal, source: Source | None, test_id: str | None, tool_calls: bool = True
    ) -> Answered:
        """The calls of the entries `answered` chooses, read for the gates that judge answers alone
        (`answered_calls`); a read with their tool calls serves one without."""
        holding = self._holding(journal)
        for reads_calls in (True,) if tool_calls else (False, True):
            kept = self._kept((Answered, source, test_id, reads_calls, *holding))
            if isinstance(kept, Answered):
                return kept
        read = answered_calls(answered(journal, source, test_id), self.book, tool_calls)
        self._keep((Answered, source, test_id, tool_calls, *holding), read)
        return read

    @staticmethod
    def _holding(journal: Journal) -> tuple[int, int]:
        """What the journal holds: a run of entries ending at its `last`, `kept` long. Taken before the entries
        are, the two can only be older than what is read, and the next read then reads afresh."""
        return journal.last, journal.kept

    def _kept(self, key: tuple[object, ...]) -> Recorded | Answered | None:
        with self._lock:
            return self._last[1] if self._last is not None and self._last[0] == key else None

    def _keep(self, key: tuple[object, ...], read: Recorded | Answered) -> None:
        with self._lock:
            self._last = (key, read)
