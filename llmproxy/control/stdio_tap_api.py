"""The control API's endpoints for `llmproxy mcp-tap` inside a run (docs/mcp.md): a stdio MCP server's
exchanges recorded into the run's cassette, through the run's own writer (and so its journal: what was handed
over survives the run being killed), and its requests answered by the run's replay, counted with the rest."""

from typing import Any

import orjson

from llmproxy.control.router import ApiError, Call, Endpoint
from llmproxy.control.stdio_tap_models import StdioAnswer, StdioExchange, StdioRecorded, StdioRequest
from llmproxy.mcp.stdio_exchange import raw_exchange, valid_name
from llmproxy.mcp.stdio_replay import answer_from
from llmproxy.proxy_session import Session


def stdio_tap_endpoints(session: Session) -> list[Endpoint]:
    """The endpoints over `session`, which must be running when they are called."""

    def record_stdio_exchange(call: Call[Any, Any, StdioExchange]) -> StdioRecorded:
        body = call.body
        assert body is not None
        tap = session.record
        sink = tap.state.value if tap is not None else None
        if tap is None or sink is None:
            raise ApiError(409, f"this run does not record ({session.describe})")
        _check(body.server)
        if not body.written:
            raise ApiError(400, "an exchange needs what the server wrote: its answer at least")
        written = [(line.t_ms, orjson.dumps(line.message)) for line in body.written]
        sink.add(raw_exchange(body.server, orjson.dumps(body.request), written, body.started_at, body.total_ms))
        return StdioRecorded(recording=tap.destination)

    def answer_stdio_request(call: Call[Any, Any, StdioRequest]) -> StdioAnswer:
        body = call.body
        assert body is not None
        replay = session.replay
        if replay is None or not replay.state.value.sources:
            raise ApiError(409, f"this run does not replay ({session.describe})")
        _check(body.server)
        if body.records_misses and session.record is None:
            raise ApiError(409, f"this run does not record what its replay lacks ({session.describe})")
        found = answer_from(replay.state.value, body.server, orjson.dumps(body.request), body.records_misses)
        return (
            StdioAnswer(written=None, miss=found) if isinstance(found, str) else StdioAnswer(written=found, miss=None)
        )

    return [
        Endpoint(
            "POST",
            "/stdio/exchanges",
            "Record an exchange of a stdio MCP server (llmproxy mcp-tap) into the run's cassette",
            record_stdio_exchange,
            StdioRecorded,
            body=StdioExchange,
        ),
        Endpoint(
            "POST",
            "/stdio/answers",
            "Answer a stdio MCP server's request (llmproxy mcp-tap) from the run's replay",
            answer_stdio_request,
            StdioAnswer,
            body=StdioRequest,
        ),
    ]


def _check(server: str) -> None:
    if not valid_name(server):
        raise ApiError(400, f"{server!r} is not a server name: letters, digits, '.', '_' and '-' only")
