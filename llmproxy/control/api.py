"""The control API's endpoints (`/llmproxy/api/v1/…`) over a running session: its status, the journal of the
exchanges it saw and verifying what it holds, the mock's expectations, and a reset. Each endpoint is declared
once, with its models and whether it only reads; the router (`llmproxy.control.router`) does the rest."""

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
    Cleared,
    EntryNumber,
    ExpectationNumber,
    Expectations,
    ExpectationStanding,
    JournalEntry,
    JournalPage,
    JournalQuery,
    Removed,
    Scope,
)
from llmproxy.control.paths import API_BASE
from llmproxy.control.router import ApiError, Call, Dumped, Endpoint, Router, Streamed
from llmproxy.control.rows import Rows
from llmproxy.control.run_api import add_to_mock, journal_counts, mock_engine, run_endpoints
from llmproxy.control.stdio_tap_api import stdio_tap_endpoints
from llmproxy.control.verify_api import verify_endpoints
from llmproxy.errors import MockError
from llmproxy.intercept import control as chaos
from llmproxy.journal import Query
from llmproxy.mock import spec
from llmproxy.mock.engine import Standing
from llmproxy.mock.load import with_scripts
from llmproxy.plan import Plan
from llmproxy.proxy_session import Session

BASE: Final = API_BASE


def control_api(session: Session) -> Router:
    """The endpoints over `session`, which must be running when they are called."""
    journal = session.journal

    rows = Rows(journal.capacity if journal is not None else 0)

    def journal_entries(call: Call[Any, JournalQuery, Any]) -> Dumped:
        """A `JournalPage`, its entries the rows the event stream sent (`llmproxy.control.rows`)."""
        kept = kept_journal(journal)
        query = call.query
        assert query is not None  # the endpoint declares its query: the router always gives one
        found = kept.read(
            Query(query.provider, query.model, query.path, query.source, query.test_id, query.since, query.limit)
        )
        counts = journal_counts(kept).model_dump(mode="json", by_alias=True, exclude_none=True)
        return Dumped({"entries": [rows.of(entry) for entry in found], "counts": counts})

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

    hub = EventHub(journal, rows.event, counters)

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
