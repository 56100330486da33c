"""The control API's endpoints (`/llmproxy/api/v1/…`) over a running session: its status, the journal of the
exchanges it saw and verifying what it holds, the mock's expectations, and a reset. Each endpoint is declared
once, with its models and whether it only reads; the router (`llmproxy.control.router`) does the rest."""

import functools
from pathlib import Path
from typing import Any, Final

from llmproxy import __version__
from llmproxy.chain import Chain
from llmproxy.control.analysis_api import analysis_endpoints
from llmproxy.control.auth import Access
from llmproxy.control.event_models import Counters, StreamEvent
from llmproxy.control.events import EventHub
from llmproxy.control.journal_calls import kept_journal
from llmproxy.control.mock_a2a_api import mock_a2a_endpoints
from llmproxy.control.mock_mcp_api import mock_mcp_endpoints
from llmproxy.control.models import (
    Added,
    ApiModel,
    Cleared,
    EntryNumber,
    ExpectationNumber,
    Expectations,
    ExpectationStanding,
    JournalEntry,
    JournalPage,
    JournalQuery,
    JournalSummary,
    Removed,
    Scope,
    TokenUsage,
)
from llmproxy.control.paths import API_BASE
from llmproxy.control.router import ApiError, Call, Endpoint, Router, Streamed
from llmproxy.control.run_api import add_to_mock, journal_counts, mock_engine, run_endpoints
from llmproxy.control.stdio_tap_api import stdio_tap_endpoints
from llmproxy.control.verify_api import verify_endpoints
from llmproxy.errors import MockError
from llmproxy.intercept import control as chaos
from llmproxy.journal import Entry, Glance, Query, Source
from llmproxy.mock import spec
from llmproxy.mock.engine import Standing
from llmproxy.mock.load import with_scripts
from llmproxy.model import Usage
from llmproxy.plan import Plan
from llmproxy.pricing import PriceBook, Priced, Unpriced
from llmproxy.proxy_session import Session

BASE: Final = API_BASE


def control_api(session: Session) -> Router:
    """The endpoints over `session`, which must be running when they are called."""
    journal = session.journal

    summaries = _Summaries(_Prices(), journal.capacity if journal is not None else 0)

    def journal_entries(call: Call[Any, JournalQuery, Any]) -> JournalPage:
        kept = kept_journal(journal)
        query = call.query
        assert query is not None  # the endpoint declares its query: the router always gives one
        found = kept.read(
            Query(query.provider, query.model, query.path, query.source, query.test_id, query.since, query.limit)
        )
        return JournalPage(entries=[summaries.of(entry) for entry in found], counts=journal_counts(kept))

    def journal_entry(call: Call[EntryNumber, Any, Any]) -> JournalEntry:
        kept = kept_journal(journal)
        assert call.params is not None
        entry = kept.get(call.params.seq)
        if entry is None:
            oldest = kept.last - kept.kept + 1
            held = f"it holds {oldest} to {kept.last}" if kept.kept else "it is empty"
            raise ApiError(404, f"the journal has no entry {call.params.seq}: {held}")
        return JournalEntry(seq=entry.seq, source=entry.source, test_id=entry.test_id, exchange=entry.exchange)

    def clear_journal(call: Call[Any, Any, Any]) -> Cleared:
        return Cleared(cleared=kept_journal(journal).clear())

    def expectations(call: Call[Any, Scope, Any]) -> Expectations:
        scope = _scope(call)
        standing = [entry for entry in mock_engine(session).standing() if scope is None or entry.test_id == scope]
        return Expectations(expectations=[_standing(entry) for entry in standing])

    def add_expectations(call: Call[Any, Scope, spec.ExpectationsFile]) -> Added:
        assert call.body is not None
        try:
            loaded = with_scripts(call.body, Path.cwd())
        except MockError as error:
            raise ApiError(400, str(error)) from None
        return Added(added=add_to_mock(session, loaded, _scope(call)))

    def remove_expectation(call: Call[ExpectationNumber, Any, Any]) -> Removed:
        assert call.params is not None
        if not mock_engine(session).remove(call.params.id):
            raise ApiError(404, f"no expectation {call.params.id}: GET {BASE}/expectations lists them")
        return Removed(removed=call.params.id)

    def clear_expectations(call: Call[Any, Scope, Any]) -> Cleared:
        return Cleared(cleared=mock_engine(session).clear(_scope(call)))

    def counters() -> Counters:
        intercept = session.intercept
        mock = session.mock
        held = mock.state.value[0] if mock is not None else None  # none yet: none put in just to be read
        return Counters(
            chaos=chaos.snapshot(intercept) if intercept is not None else None,
            expectations=[_standing(entry) for entry in held.standing()] if held is not None else None,
            counts=journal_counts(journal) if journal is not None else None,
        )

    hub = EventHub(journal, summaries.of, counters)

    def events(call: Call[Any, Any, Any]) -> Streamed:
        return Streamed(hub.stream(), "text/event-stream")

    endpoints = [
        *run_endpoints(session),
        Endpoint(
            "GET",
            "/journal",
            "The exchanges the proxy saw, redacted, newest last",
            journal_entries,
            JournalPage,
            Access.READ,
            query=JournalQuery,
        ),
        Endpoint(
            "GET",
            "/journal/{seq}",
            "One exchange whole: its request, and its response or stream events, redacted",
            journal_entry,
            JournalEntry,
            Access.READ,
            params=EntryNumber,
        ),
        Endpoint("DELETE", "/journal", "Forget every journal entry (numbering goes on)", clear_journal, Cleared),
        Endpoint(
            "GET",
            "/events",
            "What is new, pushed as server-sent events: each journal entry as it is added, the counters as they change",
            events,
            StreamEvent,
            Access.READ,
            media_types=("text/event-stream",),
            streamed=True,
        ),
        *verify_endpoints(session),
        *analysis_endpoints(session),
        Endpoint(
            "GET",
            "/expectations",
            "The mock's expectations in the order they are tried, with what each has served",
            expectations,
            Expectations,
            Access.READ,
            query=Scope,
        ),
        Endpoint(
            "POST",
            "/expectations",
            "Add expectations, in the expectations file's JSON",
            add_expectations,
            Added,
            query=Scope,
            body=spec.ExpectationsFile,
        ),
        Endpoint(
            "DELETE",
            "/expectations/{id}",
            "Remove one expectation",
            remove_expectation,
            Removed,
            params=ExpectationNumber,
        ),
        Endpoint(
            "DELETE",
            "/expectations",
            "Remove every expectation, or every one of a test",
            clear_expectations,
            Cleared,
            query=Scope,
        ),
        *mock_mcp_endpoints(session),
        *mock_a2a_endpoints(session),
        *stdio_tap_endpoints(session),
    ]
    return Router(BASE, endpoints, "llmproxy control API", __version__, closing=[hub.close])


def openapi() -> dict[str, Any]:
    """The API's OpenAPI document, without a run (docs/control.openapi.json is this, written out)."""
    return control_api(Session(Plan(), Chain())).openapi()


class _Prices:
    """The price data, loaded the first time a journal entry with usage is read (it takes a moment)."""

    def __init__(self) -> None:
        self._book: PriceBook | None = None

    def cost(self, usage: Usage, glance: Glance) -> Priced | Unpriced:
        if self._book is None:
            self._book = PriceBook()
        return self._book.cost(usage, glance.model, at=glance.at, vendor=glance.vendor, url=glance.url)


class _Summaries:
    """Each entry's summary, made once: the event stream sends it as the entry comes and a listing reads it
    again; kept for about as many entries as the journal keeps (those it dropped go with the next ones)."""

    def __init__(self, prices: _Prices, capacity: int) -> None:
        self.prices = prices
        self.capacity = capacity
        self._made: dict[int, JournalSummary] = {}

    def of(self, entry: Entry) -> JournalSummary:
        made = self._made.get(entry.seq)
        if made is None:
            made = self._made[entry.seq] = _summary(entry, self.prices)
            if len(self._made) > 2 * self.capacity:  # now and then, not on every entry
                oldest = entry.seq - self.capacity
                self._made = {seq: kept for seq, kept in list(self._made.items()) if seq > oldest}
        return made


def _summary(entry: Entry, prices: _Prices) -> JournalSummary:
    """The entry as a listing shows it: read from its glance, never converting the exchange whole. Built without
    validation: every value has its field's type already (a glance's are typed), and the event stream makes one
    for every exchange while a page watches."""
    glance = entry.glance
    usage = glance.usage
    cost = prices.cost(usage, glance) if usage is not None and entry.source is not Source.MISSED else None
    return _trusted(
        JournalSummary,
        {
            "seq": entry.seq,
            "source": entry.source,
            "door": entry.door,
            "at": glance.at,
            "method": glance.method,
            "url": glance.url,
            "provider": glance.provider,
            "operation": glance.operation,
            "model": glance.model,
            "status": glance.status,
            "streaming": glance.streaming,
            "latency_ms": glance.latency_ms,
            "ttfb_ms": glance.ttfb_ms,
            "latency_recorded": glance.latency_recorded,
            "usage": _token_usage(usage) if usage is not None else None,
            "cost_usd": str(cost.usd) if isinstance(cost, Priced) else None,
            "unpriced": cost.reason if isinstance(cost, Unpriced) else None,
            "test_id": entry.test_id,
            "error": glance.error,
            "injected": list(glance.injected),
        },
    )


def _trusted[M: ApiModel](model: type[M], values: dict[str, Any]) -> M:
    """`model.model_construct(**values)` for `values` that name every field of `model` by its name: the same
    instance, without its walk of the fields for aliases and defaults (a third of a summary's cost)."""
    made = model.__new__(model)
    object.__setattr__(made, "__dict__", values)
    object.__setattr__(made, "__pydantic_fields_set__", set(values))
    object.__setattr__(made, "__pydantic_extra__", None)
    object.__setattr__(made, "__pydantic_private__", None)
    return made


def _scope(call: Call[Any, Scope, Any]) -> str | None:
    return call.query.test_id if call.query is not None else None


def _standing(standing: Standing) -> ExpectationStanding:
    definition = standing.definition
    times = definition.times if isinstance(definition, spec.Expectation) else None
    next_turn = None
    if isinstance(definition, spec.Conversation):
        next_turn = {key: served + 1 for key, served in standing.turns.items()}
    elif standing.script_turns is not None:  # a script has one cursor, whichever session asks
        next_turn = {"": standing.script_turns + 1}
    return ExpectationStanding(
        id=standing.number,
        priority=definition.priority,
        times=times,
        served=standing.served,
        remaining=max(0, times - standing.served) if times is not None else None,
        next_turn=next_turn,
        test_id=standing.test_id,
        definition=definition,
    )


@functools.lru_cache(maxsize=1024)
def _token_usage(usage: Usage) -> TokenUsage:
    """Made once per usage: a run's answers report the same few (the model is frozen, so it is shared)."""
    return TokenUsage.model_construct(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        estimated=usage.estimated,
    )
