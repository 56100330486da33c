"""A stdio MCP server's messages as cassette exchanges, so that `llmproxy mcp-tap` records them into the same
cassette as the model's traffic and replay serves them with the same matching.

An exchange of a stdio server is one request the client wrote and what the server wrote back until it
answered it. Its URL is ``stdio://SERVER/`` (SERVER: the name the tap was given), which no HTTP request has:
that scheme is what tells the kind apart. The request is a ``POST`` of the message as a JSON body, over
``http_version`` ``stdio``; the response a ``200`` with the answer as its JSON body or, when the server wrote
notifications (progress, log messages) before answering, an NDJSON stream of each line it wrote, the answer
last. Replay matches it as every JSON-RPC request: on its method and params, never its id.
"""

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

import orjson

from llmproxy import jsonrpc
from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.convert import to_request
from llmproxy.cassette.model import Exchange, Request
from llmproxy.cassette.redact import REDACTOR
from llmproxy.model.exchange import RawEvent, RawExchange, RawRequest, RawResponse

SCHEME: Final = "stdio"
_JSON: Final = (("content-type", "application/json"),)
_LINES: Final = (("content-type", "application/x-ndjson"),)
_LAUNCHERS: Final = frozenset({"npx", "node", "bunx", "bun", "deno", "uvx", "uv", "pipx", "python", "python3", "sh"})
_NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def server_name(command: Sequence[str]) -> str:
    """The name a server's exchanges are recorded under when none is given: the program's name, or for a
    launcher (``npx``, ``node``, ``uvx``…) the first argument it launches (``@scope/server-everything@1.2``
    gives ``server-everything``)."""
    words = list(command)
    chosen = words[0] if words else "server"
    if _base(chosen) in _LAUNCHERS:
        chosen = next((word for word in words[1:] if not word.startswith("-") and word != "run"), chosen)
    program = _base(chosen).partition("@")[0] or _base(chosen)  # a package's version (name@1.2) left out
    name = _NOT_IN_A_NAME.sub("-", program.removesuffix(".js").removesuffix(".py")).strip("-.")
    return name or "server"


def valid_name(name: str) -> bool:
    return bool(name) and _NOT_IN_A_NAME.search(name) is None


def raw_request(server: str, message: bytes) -> RawRequest:
    return RawRequest("POST", SCHEME, server, 0, "/", SCHEME, _JSON, message, None)


def raw_exchange(
    server: str, message: bytes, written: Sequence[tuple[float, bytes]], started_at: datetime, total_ms: float
) -> RawExchange:
    """`written`: what the server wrote from the request to its answer (the answer last), each line with its
    time in ms since the request."""
    if len(written) == 1:
        response = RawResponse(200, "OK", SCHEME, _JSON, written[0][1], None, None)
    else:
        events = tuple(RawEvent(at, line + b"\n") for at, line in written)
        response = RawResponse(200, "OK", SCHEME, _LINES, None, events, None)
    first = written[0][0] if written else None
    return RawExchange(raw_request(server, message), response, None, started_at, first, total_ms)


def matched_request(server: str, message: bytes) -> Request:
    """The request as replay matches it against the cassette (redacted as the recording was)."""
    request, _ = to_request(raw_request(server, message), REDACTOR)
    return request


def is_stdio(exchange: Exchange) -> bool:
    return exchange.request.url.startswith(SCHEME + "://")


def written_lines(exchange: Exchange) -> list[Any]:
    """What the server wrote for a recorded exchange, each line parsed, the answer last."""
    response = exchange.response
    if response is None:
        return []
    if response.events is not None:
        return [orjson.loads(event_bytes(event)) for event in response.events]
    return [orjson.loads(body_bytes(response.body))] if response.body is not None else []


def answered_as(lines: Sequence[Any], request: Any) -> list[bytes]:
    """`lines` to write to the client's `request` (parsed): the answer's id replaced by the one the request has
    now, and the progress notifications before it under the token the request asks progress under now."""
    request_id, token = request.get("id"), jsonrpc.progress_token(request)
    out = [orjson.dumps(jsonrpc.with_progress_token(line, token)) for line in lines[:-1]]
    if lines:
        answer = lines[-1]
        out.append(orjson.dumps({**answer, "id": request_id} if isinstance(answer, dict) else answer))
    return out


def _base(word: str) -> str:
    return word.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
