"""The replay stage: a request a cassette recorded gets the recorded answer — a stream with its recorded
timing (scaled by `--timing`), a JSON-RPC answer with the id of the request it answers. A request with no
recording is passed on with the closest recording and what differs, to go upstream if the plan lets it,
else to be refused. A request that cannot even be examined fails closed.

What it serves lives in its state (`Replaying`: the index, the log of hits and misses, the replies built
so far), swapped whole by `use`: a running proxy changes cassettes between two tests.

A cassette recorded under chaos holds the faults the client met, marked `injected`. Without chaos they are
served in order, as recorded: the replay is the run again. Under chaos (the intercept in front has rules, a
budget or a host's profile, or the request carries its own `x-llmproxy-chaos`) the live chaos decides which
requests fail: an exchange holding a fault llmproxy sent in an answer's place is not served, nor counted
unused — else the client would meet the recorded faults on top of the live ones.
"""

import functools
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import orjson

from llmproxy import jsonrpc
from llmproxy.background_traffic import KNOWN, BackgroundTraffic
from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.convert import to_request
from llmproxy.cassette.decode import decode_response, exchange_route
from llmproxy.cassette.files import cassette_exists
from llmproxy.cassette.model import Exchange, JsonBody, Request, header_pairs
from llmproxy.cassette.recorded import Recorded
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import MatchOptions, ReplayHit, ReplayIndex, ReplayMiss
from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Meaning, Reply, ReplySource, text_reply
from llmproxy.chain.stage import Context, Stage
from llmproxy.chain.state import State
from llmproxy.http import HOP_BY_HOP
from llmproxy.intercept.engine import OVERRIDE
from llmproxy.intercept.faults import STANDING_IN
from llmproxy.model import Completion
from llmproxy.providers.registry import chat_codec
from llmproxy.tool_protocols import awaits_no_answer
from llmproxy.words import plural

if TYPE_CHECKING:
    from llmproxy.intercept.engine import Intercept

logger = logging.getLogger(__name__)

NOTHING: Final[frozenset[str]] = frozenset()


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
    def load(
        cls, cassettes: Sequence[Path], match: MatchOptions | None = None, *, background: bool = False
    ) -> "Replaying":
        """The cassettes' exchanges indexed (the ones that exist: a recording in progress may not yet). Raises
        CassetteError; with `background`, they are read on a thread of their own while the caller goes on, and
        `loaded` raises it (a request waits only for the exchanges it could match: `Recorded.loading`)."""
        paths = tuple(Path(path) for path in cassettes)
        exchanges = Recorded.loading([path for path in paths if cassette_exists(path)], background)
        return cls(ReplayIndex(exchanges, match or MatchOptions()), paths)

    def loaded(self) -> None:
        """Once every exchange is read. Raises what failed the load (CassetteError)."""
        self.index.recorded.loaded()

    @property
    def sizes(self) -> tuple[tuple[Path, int], ...]:
        """The cassettes the index holds, in order, with their exchanges (once loaded)."""
        return self.index.recorded.sizes

    def cassette_of(self, miss: ReplayMiss) -> Path | None:
        """The cassette that holds the recording closest to a miss (a CI annotation's file), if there is one."""
        if miss.position is None:
            return None
        end = 0
        for path, size in self.sizes:
            end += size
            if miss.position < end:
                return path
        return None

    def unused(self, passes_over: frozenset[str] = NOTHING, background: BackgroundTraffic = KNOWN) -> list[Exchange]:
        """Recorded exchanges never served (background traffic aside: its ids change every run; what an MCP
        client awaits no answer to; and exchanges holding a fault of a kind `passes_over` names: they are not
        served)."""
        unused = [exchange for exchange in self.index.unused(passes_over) if not _awaits_no_answer(exchange)]
        urls = {(exchange.request.url, exchange.operation is not None) for exchange in unused}
        kept = {(url, llm): background.recognise_url(url, llm_api=llm) is None for url, llm in urls}  # each once
        return [exchange for exchange in unused if kept[exchange.request.url, exchange.operation is not None]]

    def missed(self, miss: ReplayMiss) -> None:
        """A request with no recording was refused (nothing else answered it): a miss of this cassette set's."""
        with self.lock:
            self.misses.append(miss)

    def summary(self, passes_over: frozenset[str] = NOTHING, background: BackgroundTraffic = KNOWN) -> list[str]:
        unused = self.unused(passes_over, background)
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
        self,
        replaying: Replaying,
        redactor: Redactor,
        timing: float | None = 1.0,
        error_status: int = 599,
        chaos: "State[Intercept] | None" = None,
    ) -> None:
        """`timing`: a scale of the recorded stream offsets, or None for everything at once; `error_status`:
        for a request that cannot be examined; `chaos`: the intercept stage's state (whether chaos is on)."""
        self.state = State(replaying)
        self._adding = threading.Lock()  # two cassettes loaded at once both stay
        self.redactor = redactor
        self.timing = timing
        self.error_status = error_status
        self.chaos = chaos
        self.background = KNOWN  # what is background traffic, left out of "unused" (the plan's, with its hosts)

    def passes_over(self, incoming: Incoming | None = None) -> frozenset[str]:
        """The recorded faults not served: those that stood in for an answer, when chaos is on (for `incoming`,
        or for the run: on now, or it injected something)."""
        if self.chaos is None:
            return NOTHING
        engine = self.chaos.value
        if incoming is None:
            on = engine.active or bool(engine.injected)
        else:
            on = engine.active or OVERRIDE in incoming.headers
        return STANDING_IN if on else NOTHING

    def unused(self) -> list[Exchange]:
        """Recorded exchanges never served, and not to be (`Replaying.unused`)."""
        return self.state.value.unused(self.passes_over(), self.background)

    def decide(self, incoming: Incoming, context: Context) -> Reply | None:
        serving = self.state.value
        if not serving.sources:  # no cassette in use (a pytest test that records afresh or only mocks)
            return None
        try:
            request, route = to_request(incoming.raw, self.redactor, (incoming.route, incoming.json))
            decision = serving.index.take(request, route.provider.value if route else None, self.passes_over(incoming))
        except Exception as exc:  # strict replay fails closed: never let an unexamined request through
            logger.exception("could not match %s", incoming.raw.path)
            message = f"llmproxy replay could not examine the request: {exc}"
            return text_reply(self.error_status, message, ReplySource.ERROR)
        if isinstance(decision, ReplayMiss):
            incoming.decline(self.name, decision.reason, functools.partial(serving.missed, decision))
            return None
        with serving.lock:
            serving.hits += 1
        return self._reply(serving, decision, request)

    def use(self, cassettes: Sequence[Path], match: MatchOptions | None = None) -> Replaying:
        """Serve `cassettes` from the next request on (loaded before anything changes: a bad file raises
        CassetteError and the old ones serve on). Returns what was served until now, with its report."""
        replaying = Replaying.load(cassettes, match or self.state.value.index.options)
        return self.state.swap(replaying)

    def add(self, cassettes: Sequence[Path]) -> Replaying:
        """Serve `cassettes` too, after those served now, from the next request on (loaded first: a bad file
        raises CassetteError and nothing changes); what was served so far stays served, with its hits and misses.
        Returns what is served now."""
        added = Replaying.load(cassettes)
        with self._adding:
            serving = self.state.value
            with serving.lock:
                replaying = Replaying(
                    serving.index.extended(added.index.recorded),
                    (*serving.sources, *added.sources),
                    serving.hits,
                    list(serving.misses),
                )
            self.state.swap(replaying)
        return replaying

    def explain(self) -> str:
        serving = self.state.value
        names = ", ".join(map(str, serving.sources)) or "no cassette"
        return f"{names} ({serving.index.size} exchanges; streams at {pace(self.timing)})"

    def summary(self) -> list[str]:
        return self.state.value.summary(self.passes_over(), self.background)

    def _reply(self, serving: Replaying, hit: ReplayHit, request: Request) -> Reply:
        exchange = hit.exchange
        request_id = _jsonrpc_id(request, exchange.request)
        if isinstance(request_id, str | int) and isinstance(request.body, JsonBody):
            request_id = JsonRpcCall(request_id, jsonrpc.progress_token(request.body.json_))
        if request_id is None:
            reply = serving.replies.get(id(exchange))
            if reply is None:
                reply = serving.replies[id(exchange)] = recorded_reply(exchange, self.timing)._replace(shared=True)
            return reply
        return recorded_reply(exchange, self.timing, request_id)


def _awaits_no_answer(exchange: Exchange) -> bool:
    request = exchange.request
    headers = {name.lower(): value for name, value in header_pairs(request.headers)}
    body = request.body.json_ if isinstance(request.body, JsonBody) else None
    return awaits_no_answer(request.method.upper(), headers, body)


def pace(timing: float | None) -> str:
    """How a replay paces recorded streams, for `--explain-chain` (a plan's, and the stage's once built)."""
    return "at once" if timing is None else f"recorded timing x{timing:g}"


def recorded_reply(exchange: Exchange, timing: float | None, request_id: object = None) -> Reply:
    """The recorded response as the client got it (hop-by-hop headers aside): events at their recorded offsets
    scaled by `timing` (None: all at once, in one body; a WebSocket's messages each at 0); `request_id` in place
    of a JSON-RPC answer's id."""
    response = exchange.response
    if response is None:  # the upstream failed when recording: the client got mitmproxy's 502
        return text_reply(502, f"llmproxy replay: recorded upstream failure: {exchange.error}", ReplySource.CASSETTE)
    kept = tuple((name, value) for name, value in header_pairs(response.headers) if name.lower() not in HOP_BY_HOP)

    def decode() -> Completion | None:
        route = exchange_route(exchange)
        codec = chat_codec(route) if route is not None else None
        return decode_response(codec, response) if codec is not None else None

    meaning = Meaning(decode)
    recorded = (exchange.timings.total_ms, exchange.timings.ttfb_ms)

    if response.events is None:
        body = body_bytes(response.body) if response.body is not None else b""
        if request_id is not None and isinstance(response.body, JsonBody):
            body = _with_jsonrpc_id(body, request_id)
        return Reply(response.status, kept, body, source=ReplySource.CASSETTE, reason=response.reason, meaning=meaning,
                     recorded=recorded)  # fmt: skip
    scale = timing or 0.0
    events = [(event.t_ms / 1000 * scale, event_bytes(event)) for event in response.events]
    if request_id is not None:
        events = [(at, _event_with_jsonrpc_id(data, request_id)) for at, data in events]
    if timing is None and exchange.websocket is None:  # a WebSocket's events are messages: never joined
        body = b"".join(data for _, data in events)
        return Reply(response.status, kept, body, source=ReplySource.CASSETTE, reason=response.reason, meaning=meaning,
                     recorded=recorded)  # fmt: skip
    return Reply(
        response.status,
        kept,
        events=tuple(events),
        source=ReplySource.CASSETTE,
        reason=response.reason,
        meaning=meaning,
        recorded=recorded,
    )


@dataclass(frozen=True, slots=True)
class JsonRpcCall:
    """What a replayed JSON-RPC answer is written for: the request's id, and the token it asks progress under
    (the server's progress notifications before the answer carry it)."""

    id: object
    progress_token: object | None


@dataclass(frozen=True, slots=True)
class BatchIds:
    """A JSON-RPC batch's ids as replayed: each recorded request's id (its JSON) → the id the request in its
    place has now (a batch is matched item by item, in order, ids aside)."""

    renumbered: dict[bytes, object]

    def of(self, recorded: object) -> object:
        return self.renumbered.get(orjson.dumps(recorded), recorded)


def _jsonrpc_id(request: Request, recorded: Request) -> object | None:
    """What replaces a JSON-RPC answer's id: the request's id, or for a batch its ids by the recorded ones."""
    body = request.body
    if not isinstance(body, JsonBody):
        return None
    if isinstance(body.json_, dict) and body.json_.get("jsonrpc") == "2.0":
        return body.json_.get("id")
    if isinstance(body.json_, list) and isinstance(recorded.body, JsonBody) and isinstance(recorded.body.json_, list):
        pairs = zip(recorded.body.json_, body.json_, strict=False)
        return BatchIds(
            {
                orjson.dumps(then.get("id")): now.get("id")
                for then, now in pairs
                if isinstance(then, dict) and isinstance(now, dict) and "id" in then
            }
        )
    return None


def _with_jsonrpc_id(body: bytes, request_id: object) -> bytes:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body
    if isinstance(request_id, BatchIds):
        answers = value if isinstance(value, list) else [value]
        renumbered = [
            {**answer, "id": request_id.of(answer["id"])} if isinstance(answer, dict) and "id" in answer else answer
            for answer in answers
        ]
        return orjson.dumps(renumbered if isinstance(value, list) else renumbered[0])
    if isinstance(request_id, JsonRpcCall):
        if isinstance(value, dict) and "id" in value:
            return orjson.dumps({**value, "id": request_id.id})
        progress = jsonrpc.with_progress_token(value, request_id.progress_token)
        return body if progress is value else orjson.dumps(progress)
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
