"""Cassettes at rest as a run's journal, for `llmproxy ui CASSETTE|FOLDER…`: no proxy runs; each recorded
exchange is a journal entry (source `cassette`, filed under its cassette's path as its test id, so a report
over them keeps each cassette apart as `llmproxy report` does), and the control API — and so the dashboard —
reads them as it reads a running proxy's.

A cassette is redacted already: what is read back is what it stores, its shared histories rebuilt."""

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from llmproxy.cassette.files import read_exchanges
from llmproxy.cassette.history import inflate
from llmproxy.cassette.model import Exchange
from llmproxy.cassette.raw import raw_exchange, raw_request
from llmproxy.cassette.redact import Redactor
from llmproxy.chain import Chain
from llmproxy.chain.taps.journal import JournalTap, glance, seen
from llmproxy.errors import CassetteError
from llmproxy.journal import Capture, Glance, Journal, Seen, Source
from llmproxy.model.exchange import RawExchange, RawRequest
from llmproxy.plan import Plan
from llmproxy.proxy_session import Session

_REDACTOR = Redactor()  # what a cassette holds is redacted already: reading it again changes nothing


class _Stored:
    """Reads back a journal entry that is a stored exchange: its capture's parts are the request as if sent and
    the exchange as stored."""

    def request(self, capture: Capture) -> RawRequest:
        request: RawRequest = capture[4]
        return request

    def captured(self, capture: Capture) -> RawExchange:
        return raw_exchange(capture[5])

    def exchange(self, capture: Capture, seq: int) -> Exchange:
        stored: Exchange = capture[5]
        return stored.model_copy(update={"id": seq})

    def glance(self, capture: Capture) -> Glance:
        return glance(raw_exchange(capture[5]), _REDACTOR)

    def seen(self, capture: Capture) -> Seen:
        return seen(raw_exchange(capture[5]))

    @property
    def redactor(self) -> Redactor:
        return _REDACTOR


def journal_of(cassettes: Sequence[Path], more: Sequence[tuple[str, Sequence[Exchange]]] = ()) -> Journal:
    """Every exchange of `cassettes`, in file order, cassette after cassette (by the time each started, so a
    folder reads as the run it was), and those of `more` (named exchanges read elsewhere: an agent's log).
    Raises CassetteError for a file that is not a cassette."""
    found: list[tuple[datetime, int, str, Exchange]] = []
    for order, path in enumerate(cassettes):
        try:
            exchanges = inflate(read_exchanges(path))
        except ValueError as error:
            raise CassetteError(f"{path}: {error}") from None
        found += [(exchange.timings.started_at, order, str(path), exchange) for exchange in exchanges]
    for order, (name, named) in enumerate(more, len(cassettes)):
        found += [(exchange.timings.started_at, order, name, exchange) for exchange in named]
    found.sort(key=lambda item: (item[0], item[1]))
    journal = Journal(max(1, len(found)))
    reader = _Stored()
    for _, _, name, exchange in found:
        request = exchange.request
        raw = raw_request(request.method, request.url, request.http_version, request.headers, request.body)
        journal.add((Source.CASSETTE, name, reader, None, raw, exchange))
    return journal


def session_at_rest(cassettes: Sequence[Path], more: Sequence[tuple[str, Sequence[Exchange]]] = ()) -> Session:
    """A session that runs no proxy, its journal the cassettes' exchanges (and `more`, as `journal_of` reads
    them): what the control API reads."""
    journal = journal_of(cassettes, more)
    plan = Plan(journal=journal.capacity)
    return Session(plan, Chain(taps=[JournalTap(journal, _REDACTOR)]))
