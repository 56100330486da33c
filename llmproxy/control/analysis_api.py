"""The control API's explanations over the journal: the requests nothing answered, each with the expectation
and the recording that came nearest and where it differs (MockServer's `explain_unmatched_requests`); a request
tried against everything loaded without sending it (`debug_request_mismatch`); the optimisation report and
`explain` of one session, made by the builders of `llmproxy report` and `llmproxy explain` from the journal's
exchanges read as a cassette (`llmproxy.control.journal_calls`), redacted as a cassette is.

A miss is explained with what is loaded now (the mock's and the replay's own matching, their state left
alone): an expectation added since it missed shows as one that would answer it.
"""

from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from llmproxy.analysis.build import Selection, build_report
from llmproxy.analysis.explain import explain_selected, timeline
from llmproxy.analysis.graph import mermaid
from llmproxy.analysis.render import render
from llmproxy.analysis.report import Report
from llmproxy.analysis.sources import Grouping, Recorded
from llmproxy.analysis.tool_servers import tool_row
from llmproxy.cassette.convert import to_request
from llmproxy.cassette.replay_index import ReplayHit
from llmproxy.chain.incoming import Incoming
from llmproxy.control.analysis_models import (
    Debugged,
    DebugRequest,
    Difference,
    ExpectationTried,
    ExplainQuery,
    Miss,
    Misses,
    MissesQuery,
    RecordingTried,
    ReportQuery,
    Selected,
)
from llmproxy.control.auth import Access
from llmproxy.control.journal_calls import Reader, kept_journal
from llmproxy.control.router import ApiError, Call, Endpoint, Rendered
from llmproxy.journal import Journal, Query, Source
from llmproxy.mock.engine import Tried, closest
from llmproxy.model.exchange import RawRequest
from llmproxy.outputs import dumps
from llmproxy.outputs.explain import Explained
from llmproxy.proxy_session import Session

CLOSEST: Final = 3  # expectations a miss shows
MEDIA: Final = {
    "markdown": "text/markdown",
    "json": "application/json",
    "csv": "text/csv",
    "html": "text/html",
    "timeline": "text/plain",
    "mermaid": "text/plain",
}
GROUPS: Final = {"test": Grouping.CASSETTE, "conversation": Grouping.CONVERSATION, "host": Grouping.HOST}


def analysis_endpoints(session: Session) -> list[Endpoint]:
    """Misses, a request debugged, the report and explain over `session`; each only reads."""
    reader = Reader()

    def misses(call: Call[Any, MissesQuery, Any]) -> Misses:
        query = call.query
        assert query is not None  # the endpoint declares its query: the router always gives one
        found = kept_journal(session.journal).read(
            Query(source=Source.MISSED, test_id=query.test_id, since=query.since, limit=query.limit)
        )
        explained = []
        for entry in found:
            exchange = entry.exchange
            explained.append(
                Miss(
                    seq=entry.seq,
                    method=exchange.request.method,
                    url=exchange.request.url,
                    model=exchange.model,
                    test_id=entry.test_id,
                    expectations=_shown(closest(_tried(session, entry.incoming))[:CLOSEST]),
                    recording=_recording(session, entry.incoming),
                )
            )
        return Misses(misses=explained)

    def debug_request(call: Call[Any, Any, DebugRequest]) -> Debugged:
        assert call.body is not None
        incoming = Incoming(_raw(call.body))
        tried = _shown(_tried(session, incoming))
        recording = _recording(session, incoming)
        answering = next((entry.name for entry in tried if entry.answers), None)
        if answering is None and recording is not None and recording.answers:
            answering = f"recording {recording.exchange}"
        return Debugged(answered_by=answering, expectations=tried, recording=recording)

    def report(call: Call[Any, ReportQuery, Any]) -> Rendered:
        query = call.query
        assert query is not None
        read = _read(kept_journal(session.journal), query, reader)
        built = build_report(
            read.calls,
            read.sources,
            book=read.book,
            grouping=read.grouping,
            selection=_selection(query),
            conversation=read.conversation,
            tool_servers=read.tool_servers.ordered(),
        )
        if (telemetry := session.telemetry) is not None:  # its verdict's gauges (docs/telemetry.md#metrics)
            telemetry.reported(built)
        return Rendered(render(built, query.format), MEDIA[query.format])

    def explain(call: Call[Any, ExplainQuery, Any]) -> Rendered:
        query = call.query
        assert query is not None
        read = _read(kept_journal(session.journal), query, reader)
        calls, coverage, explanation = explain_selected(read, _selection(query))
        tools = read.tool_servers.ordered()
        if query.format == "json":
            rows = [tool_row(tally) for tally in tools]
            document = Explained(calls=len(calls), gaps=coverage.gaps(), explanation=explanation, mcpTools=rows)
            return Rendered(dumps(document) + "\n", MEDIA["json"])
        if query.format == "timeline":
            return Rendered(timeline(calls, explanation, coverage.gaps(), tools), MEDIA["timeline"])
        if explanation is None:
            raise ApiError(404, f"no chat call to explain among the {len(calls)} selected: a chart needs one")
        return Rendered(mermaid(explanation.callGraph), MEDIA["mermaid"])

    return [
        Endpoint(
            "GET",
            "/misses",
            "The requests nothing answered, each with the closest expectations and recording and what differs",
            misses,
            Misses,
            Access.READ,
            query=MissesQuery,
        ),
        Endpoint(
            "POST",
            "/misses/debug",
            "A request tried against every expectation and cassette loaded, nothing answered: what would answer it, "
            "and why each other would not",
            debug_request,
            Debugged,
            Access.READ,
            body=DebugRequest,
        ),
        Endpoint(
            "GET",
            "/report",
            "The optimisation report over the journal, as `llmproxy report` makes it: markdown, json, csv or html",
            report,
            Report,
            Access.READ,
            query=ReportQuery,
            media_types=("text/markdown", "text/csv", "text/html"),
        ),
        Endpoint(
            "GET",
            "/explain",
            "One session's agent run explained, as `llmproxy explain` does: its richest conversation and its calls",
            explain,
            Explained,
            Access.READ,
            query=ExplainQuery,
            media_types=("text/plain",),
        ),
    ]


def _read(journal: Journal, query: Selected, reader: Reader) -> Recorded:
    return reader.read(journal, query.source, query.test_id, query.since, GROUPS[query.group_by])


def _selection(query: Selected) -> Selection:
    return Selection(session=query.session, provider=query.provider, model=query.model, max_calls=query.max_calls)


def _tried(session: Session, incoming: Incoming) -> list[Tried]:
    """Every expectation in the order the mock tries them, with why each would not answer `incoming` now."""
    mock = session.mock
    engine = mock.state.value[0] if mock is not None else None
    return engine.tried(incoming) if engine is not None else []


def _shown(tried: list[Tried]) -> list[ExpectationTried]:
    return [
        ExpectationTried(id=entry.number, name=entry.name, answers=not entry.reasons, failed=list(entry.reasons))
        for entry in tried
    ]


def _recording(session: Session, incoming: Incoming) -> RecordingTried | None:
    """What the cassettes loaded would answer `incoming` now (nothing served), or the closest recording and
    where it differs; None when no cassette is loaded."""
    replay = session.replay
    if replay is None or not replay.state.value.sources:
        return None
    serving = replay.state.value
    request, route = to_request(incoming.raw, replay.redactor, (incoming.route, incoming.json))
    found = serving.index.peek(request, route.provider.value if route else None, replay.passes_over(incoming))
    if isinstance(found, ReplayHit):
        return RecordingTried(answers=True, exchange=found.exchange.id)
    cassette = serving.cassette_of(found)
    return RecordingTried(
        answers=False,
        exchange=found.closest.id if found.closest is not None else None,
        cassette=str(cassette) if cassette is not None else None,
        reason=found.reason.splitlines()[0],
        differences=[Difference(path=d.path, recorded=d.recorded, received=d.received) for d in found.differences],
    )


def _raw(request: DebugRequest) -> RawRequest:
    """The request as it would come off the wire."""
    url = urlsplit(request.url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ApiError(400, f"$.url: expected an absolute http(s) URL, got {request.url!r}")
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError as error:
        raise ApiError(400, f"$.url: {error}") from None
    headers = [(name, value) for name, value in request.headers.items()]
    body = orjson.dumps(request.body) if request.body is not None else b""
    if body and not any(name.lower() == "content-type" for name, _ in headers):
        headers.append(("content-type", "application/json"))
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    return RawRequest(
        request.method.upper(), url.scheme, url.hostname, port, path, "HTTP/1.1", tuple(headers), body, None
    )
