"""Serves requests from cassettes: a hit gets the recorded response (a stream through the loopback relay,
with its recorded timing); a miss gets a diagnostic in the provider's error shape; nothing reaches the
network unless the record mode or `--allow-host` lets it.

Answered flows are marked, so a recorder running beside (record modes `new_episodes`, `once`) keeps only
what went upstream.
"""

import copy
import logging
import threading
from collections.abc import Collection
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
from llmproxy.model import ErrorKind, Route
from llmproxy.providers.registry import chat_codec, embedding_codec, rerank_codec

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
    allowed_hosts: Collection[str] = ()  # reach the network even in strict mode


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
        if flow.request.pretty_host.lower() in self.settings.allowed_hosts:
            return
        try:
            request, route = to_request(raw_request(flow.request), self.redactor)
            decision = self.index.take(request, route.provider.value if route else None)
        except Exception as exc:  # strict replay fails closed: never let an unexamined request through
            logger.exception("could not match %s", _where(flow))
            self._answer_miss(flow, None, f"llmproxy replay could not examine the request: {exc}")
            return
        if isinstance(decision, ReplayHit):
            with self.log.lock:
                self.log.hits += 1
            self._answer(flow, decision.exchange, request)
            return
        if self.settings.forward_misses:
            return  # new_episodes: upstream answers, the recorder keeps it
        with self.log.lock:
            self.log.misses.append(decision)
        message = decision.explain()
        if MOCK_MISS in flow.metadata:  # llmproxy mock: no expectation answered either
            mocked = flow.metadata[MOCK_MISS]
            message = f"{decision.request}: {mocked}" if self.index.size == 0 else f"{mocked}\nand {message}"
        logger.error("replay miss: %s", message)
        self._answer_miss(flow, route, message)

    def _answer(self, flow: http.HTTPFlow, exchange: Exchange, request: Request) -> None:
        flow.metadata[ANSWERED] = True
        response = exchange.response
        if response is None:  # the upstream failed when recording: the client got mitmproxy's 502
            flow.response = http.Response.make(502, f"llmproxy replay: recorded upstream failure: {exchange.error}")
            return
        request_id = _jsonrpc_id(request)
        if response.events is not None and self.settings.timing is not None:
            self._relay(flow, response, request_id)
            return
        flow.response = self._whole_response(exchange, response)
        if request_id is not None:
            if response.events is None and isinstance(response.body, JsonBody):
                flow.response.content = _with_jsonrpc_id(flow.response.content or b"", request_id)
            elif response.events is not None:
                flow.response.content = b"".join(
                    _event_with_jsonrpc_id(event_bytes(event), request_id) for event in response.events
                )

    def _whole_response(self, exchange: Exchange, response: RecordedResponse) -> http.Response:
        """A copy of the exchange's response, built once: building a mitmproxy Response costs ~40 µs (every
        field type-checked), a copy ~6 µs."""
        template = self._responses.get(id(exchange))
        if template is None:
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

    def _relay(self, flow: http.HTTPFlow, response: RecordedResponse, request_id: object | None) -> None:
        """Sends the flow to the loopback relay, which plays the events back at their recorded offsets."""
        events = [(event.t_ms / 1000, event_bytes(event)) for event in response.events or ()]
        if request_id is not None:
            events = [(at, _event_with_jsonrpc_id(data, request_id)) for at, data in events]
        scale = self.settings.timing or 0.0
        kept = tuple((name, value) for name, value in header_pairs(response.headers) if name.lower() not in _HOP_BY_HOP)
        self.relay.serve(flow, Prepared(response.status, response.reason, kept, [(at * scale, d) for at, d in events]))

    def _answer_miss(self, flow: http.HTTPFlow, route: Route | None, message: str) -> None:
        flow.metadata[ANSWERED] = True
        status = self.settings.miss_status
        codec = (chat_codec(route) or embedding_codec(route) or rerank_codec(route)) if route else None
        if codec is None:
            flow.response = http.Response.make(status, message, {"content-type": "text/plain; charset=utf-8"})
            return
        reply = codec.encode_error(ErrorKind.INVALID_REQUEST, message)
        flow.response = http.Response.make(status, reply.body, reply.headers)


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


def _where(flow: http.HTTPFlow) -> str:
    request = flow.request
    return f"{request.method} {request.scheme}://{request.pretty_host}{request.path.split('?', 1)[0]}"
