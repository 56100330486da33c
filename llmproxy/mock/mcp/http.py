"""The mock's MCP servers over Streamable HTTP ("Transports", https://modelcontextprotocol.io/specification/
2025-11-25/basic/transports#streamable-http), answered by the mock's stage like any mocked request — so the
journal, a recording of what was sent, chaos and the request log see them as they see an LLM call.

A server is reached at its path on the mock's base URL (`/mcp/NAME`), or under a real server's URL through
the proxy (`https://mcp.example.com/mcp`, as an agent configured for it sends it). Each POST carries one
JSON-RPC message (a batch, for a session that agreed to 2025-03-26 or older): a request is answered with one
JSON body or an event stream (the server's `response`, or a stream when a tool sends log messages or progress
first), notifications and responses with 202. `initialize` opens a session whose `Mcp-Session-Id` every later
request carries (400 without it, 404 once it is over); DELETE ends it; GET is 405, as a server that opens no
stream of its own may answer. A `MCP-Protocol-Version` this server does not speak is a 400.

The Host and Origin of a request must be the server's own (loopback names on the base URL, its URL's host
through the proxy): anything else is a 403, the DNS-rebinding protection the specification asks of a local
server.
"""

import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Headers, Reply
from llmproxy.jsonrpc import INVALID_REQUEST, PARSE_ERROR, JsonObject
from llmproxy.mcp import protocol
from llmproxy.mock.jsonrpc_http import JSON, LOOPBACK, STREAM, Served, refusal
from llmproxy.mock.mcp import spec
from llmproxy.mock.mcp.server import Answered, McpServerMock, McpSession, ToolStanding
from llmproxy.mock.scripted import apart

_SESSION_NOT_FOUND: Final = -32001  # what the official SDKs answer a request of an ended or unknown session with


@dataclass(frozen=True, slots=True)
class ServerStanding:
    """One server as the control API lists it: its definition, what its list methods answer (`listed`, by
    method), its tools with the calls they have had, and its open sessions (None: it keeps none)."""

    definition: spec.McpServer
    listed: Mapping[str, JsonObject]
    tools: list[ToolStanding]
    sessions: int | None


class _Endpoint:
    """One server's sessions beside its answers."""

    def __init__(self, definition: spec.McpServer, new_id: Callable[[], str]) -> None:
        self.server = McpServerMock(definition)
        self.definition = definition
        self.host = urlsplit(definition.url).hostname if definition.url is not None else None
        self.sessions: dict[str, McpSession] = {}
        self.lock = threading.Lock()
        self.new_id = new_id


class McpEndpoints:
    """The file's MCP servers, by the path and the URL each is served at."""

    def __init__(self, servers: tuple[spec.McpServer, ...], new_id: Callable[[], str] | None = None) -> None:
        self._new_id = new_id or (lambda: secrets.token_hex(16))
        self._by_name: dict[str, _Endpoint] = {}
        self._by_path: dict[str, _Endpoint] = {}
        self._by_url: dict[tuple[str, str], _Endpoint] = {}
        self.add(servers)

    @property
    def servers(self) -> list[spec.McpServer]:
        return [endpoint.definition for endpoint in self._by_name.values()]

    def standing(self) -> list[ServerStanding]:
        """Every server in the order it was first added, with what it has served."""
        standing = []
        for endpoint in list(self._by_name.values()):
            with endpoint.lock:
                sessions = len(endpoint.sessions) if endpoint.definition.sessions else None
            server = endpoint.server
            standing.append(ServerStanding(endpoint.definition, server.listed, server.tools_standing(), sessions))
        return standing

    def add(self, servers: tuple[spec.McpServer, ...]) -> None:
        """Serve these too; one named as a server already served replaces it, its sessions kept (a test that
        changes a tool's results while its agent runs). Raises ValueError when one would share a path or URL
        with another."""
        named = {server.name for server in servers}
        kept = [server for server in self.servers if server.name not in named]
        spec.check_servers(servers)
        for server in servers:
            for other in kept:
                apart("MCP server", server, other)
        for server in servers:
            endpoint = _Endpoint(server, self._new_id)
            replaced = self._by_name.get(server.name)
            if replaced is not None:
                endpoint.sessions = replaced.sessions
            self._by_name[server.name] = endpoint
        self._by_path = {endpoint.definition.served_path: endpoint for endpoint in self._by_name.values()}
        self._by_url = {
            _url_key(endpoint.definition.url): endpoint
            for endpoint in self._by_name.values()
            if endpoint.definition.url
        }

    def answer(self, incoming: Incoming) -> Served | None:
        """The answer when `incoming` is for one of the servers; None when it is for none of them."""
        host = incoming.host.lower()
        endpoint = self._by_url.get((host, incoming.path)) or self._by_path.get(incoming.path)
        if endpoint is None:
            return None
        name = endpoint.definition.name
        refused = _foreign(endpoint, host, incoming.headers.get("origin"))
        if refused is not None:
            return Served("mcp", refusal(403, refused), name, f"{incoming.method} (refused: 403)", refused)
        if incoming.method == "POST":
            return _post(endpoint, incoming)
        if incoming.method == "DELETE" and endpoint.definition.sessions:
            return _delete(endpoint, incoming)
        allowed = "POST, DELETE" if endpoint.definition.sessions else "POST"
        why = f"{incoming.method} is not served here: POST JSON-RPC messages (this server opens no event stream)"
        return Served("mcp", refusal(405, why, allow=allowed), name, f"{incoming.method} (refused: 405)")


def _url_key(url: str | None) -> tuple[str, str]:
    parts = urlsplit(url or "")
    return (parts.hostname or "", parts.path or "/")


def _foreign(endpoint: _Endpoint, host: str, origin: str | None) -> str | None:
    """Why a request's Host or Origin is not this server's (DNS rebinding), or None when both are."""
    own = {*LOOPBACK, *([endpoint.host] if endpoint.host else [])}
    if host not in own:
        return f"Host {host} is not this MCP server's (DNS rebinding protection)"
    if origin is not None and origin != "null" and (urlsplit(origin).hostname or "").lower() not in own:
        return f"Origin {origin} is not allowed to reach this MCP server (DNS rebinding protection)"
    return None


def _post(endpoint: _Endpoint, incoming: Incoming) -> Served:
    name = endpoint.definition.name

    message = incoming.json
    asked = message.get("method") if isinstance(message, dict) else None
    said = asked if isinstance(asked, str) else "POST"

    def refused(status: int, code: int, why: str) -> Served:
        return Served("mcp", refusal(status, why, code), name, f"{said} (refused: {status})")

    media = incoming.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media != "application/json":
        return refused(415, INVALID_REQUEST, f"Content-Type must be application/json, not {media or 'absent'}")
    json_ok, stream_ok = _accepts(incoming.headers.get("accept"))
    if not (json_ok or stream_ok):
        return refused(406, INVALID_REQUEST, "Accept must allow application/json or text/event-stream")
    if message is None or (isinstance(message, list) and not message):
        return refused(400, PARSE_ERROR, "the body is not a JSON-RPC message (parse error)")
    version = incoming.headers.get(protocol.VERSION_HEADER)
    if version is not None and version not in protocol.VERSIONS:
        why = f"unsupported MCP-Protocol-Version {version}: this server speaks {', '.join(protocol.VERSIONS)}"
        return refused(400, INVALID_REQUEST, why)
    opening = isinstance(message, dict) and message.get("method") == "initialize"
    session_id = incoming.headers.get(protocol.SESSION_HEADER)
    if not endpoint.definition.sessions:
        session = McpSession(version=version or protocol.ASSUMED)
    elif opening:
        session = McpSession(endpoint.new_id())
    elif session_id is None:
        return refused(400, INVALID_REQUEST, "the Mcp-Session-Id header is missing: initialize first")
    else:
        with endpoint.lock:
            found = endpoint.sessions.get(session_id)
        if found is None:
            return refused(404, _SESSION_NOT_FOUND, f"session {session_id} not found: it ended, or never began")
        session = found
    if isinstance(message, list):
        if opening or not protocol.batches(session.version):
            return refused(400, INVALID_REQUEST, f"JSON-RPC batches are not part of MCP {session.version}")
        messages = message
    else:
        messages = [message]
    answers = [endpoint.server.answer_message(each, session) for each in messages]
    said = "; ".join(answer.said for answer in answers)
    by = "; ".join(answer.by for answer in answers if answer.by)
    missed = next((answer.missed for answer in answers if answer.missed), None)
    responses = [answer.response for answer in answers if answer.response is not None]
    headers: Headers = ((protocol.SESSION_HEADER, session.id),) if session.id is not None else ()
    if opening and session.id is not None and responses and "result" in responses[0]:
        with endpoint.lock:
            endpoint.sessions[session.id] = session
    if not responses:
        return Served("mcp", Reply(202, headers), name, said, by, missed)
    status = 400 if len(answers) == 1 and answers[0].invalid else 200
    notifying = any(answer.before for answer in answers)
    if stream_ok and (not json_ok or notifying or endpoint.definition.response == "sse"):
        return Served("mcp", Reply(status, (*STREAM, *headers), events=_events(answers)), name, said, by, missed)
    body = responses if isinstance(message, list) else responses[0]
    return Served("mcp", Reply(status, (JSON, *headers), orjson.dumps(body)), name, said, by, missed)


def _delete(endpoint: _Endpoint, incoming: Incoming) -> Served:
    name = endpoint.definition.name
    session_id = incoming.headers.get(protocol.SESSION_HEADER)
    if session_id is None:
        return Served("mcp", refusal(400, "DELETE ends a session: give its Mcp-Session-Id"), name, "DELETE")
    with endpoint.lock:
        ended = endpoint.sessions.pop(session_id, None)
    if ended is None:
        said = f"session {session_id} not found: it ended, or never began"
        return Served("mcp", refusal(404, said, _SESSION_NOT_FOUND), name, "DELETE (refused: 404)")
    return Served("mcp", Reply(200, ()), name, "DELETE", "session ended")


def _accepts(accept: str | None) -> tuple[bool, bool]:
    """Whether the client takes a JSON body, and an event stream (no Accept: JSON)."""
    if accept is None:
        return True, False
    kinds = {part.partition(";")[0].strip().lower() for part in accept.split(",")}
    anything = bool(kinds & {"*/*", "application/*"})
    return anything or "application/json" in kinds, "*/*" in kinds or "text/event-stream" in kinds


def _events(answers: list[Answered]) -> tuple[tuple[float, bytes], ...]:
    """Each answer's notifications then its response, as server-sent events at their offsets."""
    events: list[tuple[float, bytes]] = []
    at = 0.0
    for answer in answers:
        for message in answer.before:
            events.append((at, _event(message)))
            at += answer.interval
        if answer.response is not None:
            events.append((at, _event(answer.response)))
    return tuple(events)


def _event(message: Any) -> bytes:
    return b"event: message\ndata: " + orjson.dumps(message) + b"\n\n"
