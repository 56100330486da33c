"""The replay stage: a request a cassette recorded gets the recorded answer — a stream with its recorded
timing (scaled by `--timing`), a JSON-RPC answer with the id of the request it answers. A request with no
recording is passed on with the closest recording and what differs, to go upstream if the plan lets it,
else to be refused. A request that cannot even be examined fails closed.

What it serves lives in its state (`Replaying`: the index, the log of hits and misses, the replies built
so far), swapped whole by `use`: a running proxy changes cassettes between two tests.
"""

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import orjson

from llmproxy.background_traffic import background_url
from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.convert import to_request
from llmproxy.cassette.decode import decode_response, exchange_route
from llmproxy.cassette.files import cassette_exists
from llmproxy.cassette.model import Exchange, JsonBody, Request, header_pairs
from llmproxy.cassette.recorded import Recorded, load_recorded
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import MatchOptions, ReplayHit, ReplayIndex, ReplayMiss
from llmproxy.chain.incoming import Decline, Incoming
from llmproxy.chain.reply import Reply, Source, text_reply
from llmproxy.chain.stage import Context, Stage
from llmproxy.chain.state import State
from llmproxy.errors import LlmproxyError
from llmproxy.http import HOP_BY_HOP
from llmproxy.model import Completion
from llmproxy.providers.registry import chat_codec
from llmproxy.words import plural

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Replaying:
    """What the stage serves, and what it served: one cassette set's index and its report."""

    index: ReplayIndex
    sources: tuple[Path, ...] = ()
    hits: int = 0
    misses: list[ReplayMiss] = field(default_factory=list)
    replies: dict[int, Reply] = field(default_factory=dict)  # id(exchange) → its reply, built once
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def load(cls, cassettes: Sequence[Path], match: MatchOptions | None = None) -> "Replaying":
        """The cassettes' exchanges indexed (the ones that exist: a recording in progress may not yet).
        Raises CassetteError."""
        paths = tuple(Path(path) for path in cassettes)
        exchanges = Recorded.joined(load_recorded(path) for path in paths if cassette_exists(path))
        return cls(ReplayIndex(exchanges, match or MatchOptions()), paths)

    def unused(self) -> list[Exchange]:
        """Recorded exchanges never served (background traffic aside: its ids change every run)."""
        unused = self.index.unused()
        kept = {url: background_url(url) is None for url in {exchange.request.url for exchange in unused}}
        return [exchange for exchange in unused if kept[exchange.request.url]]  # each URL looked up once

    def summary(self) -> list[str]:
        unused = self.unused()
        lines = [f"replayed {plural(self.hits, 'request')}: {len(self.misses)} missed, {len(unused)} unused"]
        for miss in self.misses:  # with the paths that differ, as the miss diagnostic gave them
            first, *differences = miss.explain().splitlines()
            lines += [f"  miss: {first}", *(f"  {line}" for line in differences)]
        lines += [f"  unused: exchange {e.id}: {e.request.method} {e.request.url}" for e in unused]
        from llmproxy.cassette.audit import decode_summary  # the codecs: only when a replay ends

        return [*lines, *decode_summary(self.index.served())]


class ReplayStage(Stage):
    name = "replay"

    def __init__(
        self, replaying: Replaying, redactor: Redactor, timing: float | None = 1.0, error_status: int = 599
    ) -> None:
        """`timing`: a scale of the recorded stream offsets, or None for everything at once; `error_status`:
        for a request that cannot be examined."""
        self.state = State(replaying)
        self.redactor = redactor
        self.timing = timing
        self.error_status = error_status

    def decide(self, incoming: Incoming, context: Context) -> Reply | None:
        serving = self.state.value
        if not serving.sources:  # no cassette in use (a pytest test that records afresh or only mocks)
            return None
        try:
            request, route = to_request(incoming.raw, self.redactor, (incoming.route, incoming.json))
            decision = serving.index.take(request, route.provider.value if route else None)
        except Exception as exc:  # strict replay fails closed: never let an unexamined request through
            logger.exception("could not match %s", incoming.raw.path)
            message = f"llmproxy replay could not examine the request: {exc}"
            return text_reply(self.error_status, message, Source.ERROR)
        if isinstance(decision, ReplayMiss):
            incoming.decline(self.name, decision.reason, decision)
            return None
        with serving.lock:
            serving.hits += 1
        return self._reply(serving, decision, request)

    def refused(self, decline: Decline) -> None:
        assert isinstance(decline.detail, ReplayMiss)
        serving = self.state.value
        with serving.lock:
            serving.misses.append(decline.detail)

    def use(self, cassettes: Sequence[Path], match: MatchOptions | None = None) -> Replaying:
        """Serve `cassettes` from the next request on (loaded before anything changes: a bad file raises
        CassetteError and the old ones serve on). Returns what was served until now, with its report."""
        replaying = Replaying.load(cassettes, match or self.state.value.index.options)
        return self.state.swap(replaying)

    def explain(self) -> str:
        serving = self.state.value
        timing = "at once" if self.timing is None else f"recorded timing x{self.timing:g}"
        names = ", ".join(map(str, serving.sources)) or "no cassette"
        return f"{names} ({serving.index.size} exchanges; streams at {timing})"

    def close(self, failures: list[LlmproxyError]) -> list[str]:
        return self.state.value.summary()

    def _reply(self, serving: Replaying, hit: ReplayHit, request: Request) -> Reply:
        exchange = hit.exchange
        request_id = _jsonrpc_id(request)
        if request_id is None:
            reply = serving.replies.get(id(exchange))
            if reply is None:
                reply = serving.replies[id(exchange)] = replace(recorded_reply(exchange, self.timing), shared=True)
            return reply
        return recorded_reply(exchange, self.timing, request_id)


def recorded_reply(exchange: Exchange, timing: float | None, request_id: object = None) -> Reply:
    """The recorded response as the client got it (hop-by-hop headers aside): events at their recorded offsets
    scaled by `timing` (None: all at once, in one body; a WebSocket's messages each at 0); `request_id` in place
    of a JSON-RPC answer's id."""
    response = exchange.response
    if response is None:  # the upstream failed when recording: the client got mitmproxy's 502
        return text_reply(502, f"llmproxy replay: recorded upstream failure: {exchange.error}", Source.CASSETTE)
    kept = tuple((name, value) for name, value in header_pairs(response.headers) if name.lower() not in HOP_BY_HOP)

    def meaning() -> Completion | None:
        route = exchange_route(exchange)
        codec = chat_codec(route) if route is not None else None
        return decode_response(codec, response) if codec is not None else None

    if response.events is None:
        body = body_bytes(response.body) if response.body is not None else b""
        if request_id is not None and isinstance(response.body, JsonBody):
            body = _with_jsonrpc_id(body, request_id)
        return Reply(response.status, kept, body, source=Source.CASSETTE, reason=response.reason, meaning=meaning)
    scale = timing or 0.0
    events = [(event.t_ms / 1000 * scale, event_bytes(event)) for event in response.events]
    if request_id is not None:
        events = [(at, _event_with_jsonrpc_id(data, request_id)) for at, data in events]
    if timing is None and exchange.websocket is None:  # a WebSocket's events are messages: never joined
        body = b"".join(data for _, data in events)
        return Reply(response.status, kept, body, source=Source.CASSETTE, reason=response.reason, meaning=meaning)
    return Reply(
        response.status, kept, events=tuple(events), source=Source.CASSETTE, reason=response.reason, meaning=meaning
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
