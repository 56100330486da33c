"""Serves requests from cassettes: a hit gets the recorded response (a stream through the loopback relay,
with its recorded timing); a miss gets a diagnostic in the provider's error shape; nothing reaches the
network unless the record mode or `--allow-host` lets it.

Answered flows are marked, so a recorder running beside (record modes `new_episodes`, `once`) keeps only
what went upstream.
"""

import copy
import logging
import threading
from dataclasses import dataclass, field

import orjson
from mitmproxy import http

from addons.flows import ANSWERED, MOCK_MISS, raw_request
from addons.stream_relay import Prepared, StreamRelay
from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.convert import to_request
from llmproxy.cassette.model import Exchange, JsonBody, Request, header_pairs
from llmproxy.cassette.model import Response as RecordedResponse
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import ReplayHit, ReplayIndex, ReplayMiss
from llmproxy.egress import EgressPolicy
from llmproxy.model import ErrorKind, Route
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.registry import error_encoder

logger = logging.getLogger(__name__)

_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "te", "trailer", "upgrade"}
)


@dataclass(slots=True)
class ReplayLog:
    """What the replay served, for the end-of-run summary."""

    hits: int = 0
    misses: list[ReplayMiss] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True, slots=True)
class ReplaySettings:
    miss_status: int = 599
    timing: float | None = 1.0  # scale of the recorded offsets; None: everything at once
    forward_misses: bool = False  # record mode new_episodes: a miss goes upstream (and is recorded)
    egress: EgressPolicy = field(default_factory=EgressPolicy)  # lets out what the cassette does not answer


class Replayer:
    def __init__(self, index: ReplayIndex, settings: ReplaySettings, redactor: Redactor, relay: StreamRelay) -> None:
        self.index = index
        self.settings = settings
        self.redactor = redactor
        self.relay = relay
        self.log = ReplayLog()
        self._responses: dict[int, http.Response] = {}  # id(exchange) → its response, built once

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or flow.metadata.get(ANSWERED):  # answered, or on its way to the relay
            return
        live = flow.request
        refusal = self.settings.egress.check_request(live.host, live.port, [live.host_header, flow.client_conn.sni])
        outcome = self._decide(
            raw_request(live),
            flow.metadata.get(MOCK_MISS),
            let_through=refusal is None or self.settings.forward_misses,
            kept_in=refusal.reason if refusal is not None and self.settings.egress.entries else None,
        )
        if outcome is None:
            return  # upstream answers: a host allowed out, or new_episodes (the recorder keeps the answer)
        flow.metadata[ANSWERED] = True
        if isinstance(outcome, Prepared):  # a miss
            headers = http.Headers([(name.encode(), value.encode()) for name, value in outcome.headers])
            flow.response = http.Response.make(outcome.status, b"".join(data for _, data in outcome.chunks), headers)
            return
        exchange, request = outcome
        if exchange.response is not None and exchange.response.events is not None and self.settings.timing is not None:
            self.relay.serve(flow, self._prepared(exchange, request))
            return
        flow.response = self._whole_response(exchange, exchange.response)
        request_id = _jsonrpc_id(request)
        if request_id is not None and exchange.response is not None:
            flow.response.content = b"".join(data for _, data in self._prepared(exchange, request).chunks)

    def direct(self, raw: RawRequest, mock_miss: str | None = None) -> Prepared:
        """The answer to a request that reached the relay directly (a base-URL client of `llmproxy mock`)."""
        outcome = self._decide(raw, mock_miss, let_through=False)
        if isinstance(outcome, Prepared):
            return outcome
        assert outcome is not None
        return self._prepared(*outcome)

    def _decide(
        self, raw: RawRequest, mock_miss: str | None, *, let_through: bool, kept_in: str | None = None
    ) -> tuple[Exchange, Request] | Prepared | None:
        """The recorded exchange that answers, the miss to send, or None when a miss may go upstream.
        `kept_in`: why `--allow-host` did not let it out, for the diagnostic."""
        try:
            request, route = to_request(raw, self.redactor)
            decision = self.index.take(request, route.provider.value if route else None)
        except Exception as exc:  # strict replay fails closed: never let an unexamined request through
            logger.exception("could not match %s %s://%s%s", raw.method, raw.scheme, raw.host, raw.path)
            return self._miss(None, f"llmproxy replay could not examine the request: {exc}")
        if isinstance(decision, ReplayHit):
            with self.log.lock:
                self.log.hits += 1
            return decision.exchange, request
        if let_through:
            return None
        with self.log.lock:
            self.log.misses.append(decision)
        message = decision.explain()
        if mock_miss is not None:  # llmproxy mock: no expectation answered either
            message = f"{decision.request}: {mock_miss}" if self.index.size == 0 else f"{mock_miss}\nand {message}"
        if kept_in is not None:
            message += f"\n  not let out (--allow-host): {kept_in}"
        logger.error("replay miss: %s", message)
        return self._miss(route, message)

    def _whole_response(self, exchange: Exchange, response: RecordedResponse | None) -> http.Response:
        """A copy of the exchange's response, built once: building a mitmproxy Response costs ~40 µs (every
        field type-checked), a copy ~6 µs."""
        template = self._responses.get(id(exchange))
        if template is None:
            if response is None:  # the upstream failed when recording: the client got mitmproxy's 502
                template = http.Response.make(502, f"llmproxy replay: recorded upstream failure: {exchange.error}")
            else:
                body = body_bytes(response.body) if response.body is not None else b""
                if response.events is not None:  # --timing instant: all events in one body
                    body = b"".join(event_bytes(event) for event in response.events)
                template = http.Response.make(response.status, body, _kept_headers(response))
                template.reason = response.reason
            self._responses[id(exchange)] = template
        copied = copy.copy(template)
        copied.data = copy.copy(template.data)
        copied.data.headers = template.data.headers.copy()
        return copied

    def _prepared(self, exchange: Exchange, request: Request) -> Prepared:
        """The recorded response as the relay sends it: events at their recorded offsets (scaled by
        --timing), a JSON-RPC answer with the id of the request it answers."""
        response = exchange.response
        if response is None:
            failure = f"llmproxy replay: recorded upstream failure: {exchange.error}".encode()
            return Prepared(502, "Bad Gateway", (("content-type", "text/plain; charset=utf-8"),), [(0.0, failure)])
        request_id = _jsonrpc_id(request)
        kept = tuple((name, value) for name, value in header_pairs(response.headers) if name.lower() not in _HOP_BY_HOP)
        if response.events is None:
            body = body_bytes(response.body) if response.body is not None else b""
            if request_id is not None and isinstance(response.body, JsonBody):
                body = _with_jsonrpc_id(body, request_id)
            return Prepared(response.status, response.reason, kept, [(0.0, body)])
        scale = self.settings.timing or 0.0
        events = [(event.t_ms / 1000 * scale, event_bytes(event)) for event in response.events]
        if request_id is not None:
            events = [(at, _event_with_jsonrpc_id(data, request_id)) for at, data in events]
        return Prepared(response.status, response.reason, kept, events)

    def _miss(self, route: Route | None, message: str) -> Prepared:
        status = self.settings.miss_status
        if route is None:  # not an LLM API: a plain JSON error, as an HTTP API says "not found"
            body = orjson.dumps({"error": {"type": "not_found_error", "message": message}})
            return Prepared(status, "", (("content-type", "application/json"),), [(0.0, body)])
        reply = error_encoder(route)(ErrorKind.INVALID_REQUEST, message)
        return Prepared(status, "", tuple(reply.headers.items()), [(0.0, reply.body)])


def _kept_headers(response: RecordedResponse) -> http.Headers:
    return http.Headers(
        [
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in header_pairs(response.headers)
            if name.lower() not in _HOP_BY_HOP
        ]
    )


def _jsonrpc_id(request: Request) -> object | None:
    body = request.body
    if isinstance(body, JsonBody) and isinstance(body.json_, dict) and body.json_.get("jsonrpc") == "2.0":
        return body.json_.get("id")
    return None


def _with_jsonrpc_id(body: bytes, request_id: object) -> bytes:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body
    if isinstance(value, dict) and "id" in value:
        return orjson.dumps({**value, "id": request_id})
    return body


def _event_with_jsonrpc_id(data: bytes, request_id: object) -> bytes:
    """An SSE event carrying a JSON-RPC response (MCP Streamable HTTP), its id replaced."""
    text = data.decode("utf-8", "replace")
    lines = []
    for line in text.split("\n"):
        if line.startswith("data: "):
            line = "data: " + _with_jsonrpc_id(line[6:].encode(), request_id).decode()
        lines.append(line)
    return "\n".join(lines).encode()
