"""A request on its way through the answer chain, as every stage sees it: the wire request (`raw`), the door
it came through, and its decoded forms, each worked out once, on first use, and shared by every stage — the
API it speaks, its JSON, its completed assistant turns and the conversation it carries. A stage that passes a
request on leaves a `Decline` saying why, so a request nothing answers is refused with every reason."""

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final
from urllib.parse import parse_qsl

import orjson

from llmproxy.model import Conversation, Route
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.node import Parsed
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect, with_body
from llmproxy.providers.token_counts import TokenCounter, token_counter

_NOT_YET: Final = object()
logger = logging.getLogger(__name__)


class Door(StrEnum):
    """How a request reached llmproxy."""

    PROXY = "proxy"  # through the intercepting proxy (HTTPS_PROXY, or a --reverse listener)
    RELAY = "relay"  # a client set by base URL, on the loopback relay
    WEBSOCKET = "websocket"  # a message up a WebSocket (e.g. a Responses `response.create`)


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where a request would go if it went out: the server as the connection really goes (not what the Host
    header says), and the names the client asserts (its Host header, its TLS SNI; None where it gave none)."""

    host: str
    port: int
    asserted: tuple[str | None, ...] = ()


@dataclass(frozen=True, slots=True)
class Forwarding:
    """What the door does, as a stage asked, to a request it sends upstream and to the answer: hold it back
    `wait` seconds, set (None: remove) `request_headers` on what goes out, and put `answer_headers` on the
    upstream's answer when it is a success (2xx), replacing headers of the same names."""

    wait: float = 0.0
    request_headers: tuple[tuple[str, str | None], ...] = ()
    answer_headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class AttachedChaos:
    """A chaos profile the answering stage attached to its reply (a mock turn's `chaos`), for the intercept tap:
    `name` for counters and logs; `take_back` un-serves the turn when a fault means the client never got it
    (it will ask again, and must get that turn)."""

    name: str
    profile: object
    take_back: Callable[[], None] | None = None


@dataclass(frozen=True, slots=True)
class Decline:
    """Why a stage passed a request on; `detail` is the stage's own account (a `ReplayMiss`, a `MockMiss`)."""

    stage: str
    reason: str
    detail: object = None


class Incoming:
    """`host`, `path` (without the query) and `query` are where it goes; `headers` its headers by lower-case
    name; `json` the body parsed (None when it is not JSON); `route` the API it speaks (None for anything
    else); `codec` the chat API's codec and `turn` its completed assistant turns, counted without a decode;
    `model` the model it asks for. `conversation` is decoded only when something reads it: a decode costs more
    than all the rest of a mocked answer.

    What stages and taps leave on it for each other: `forwarding` (for the door, when it goes upstream),
    `intercepted` (the intercept stage's decision, which its tap carries out on the answer), `chaos` (a chaos
    profile the answering stage attached, e.g. a mock turn's) and `injected` (the faults
    put into its answer, as JSON objects: the recording marks the exchange with them)."""

    __slots__ = (
        "_codec",
        "_conversation",
        "_headers",
        "_json",
        "_model",
        "_path",
        "_query",
        "_route",
        "_settled",
        "_turn",
        "chaos",
        "declines",
        "door",
        "forwarding",
        "injected",
        "intercepted",
        "raw",
        "upstream",
    )

    def __init__(self, raw: RawRequest, door: Door = Door.PROXY, upstream: Upstream | None = None) -> None:
        """`upstream`: where it would go out; None on a door that cannot forward (the relay)."""
        self.raw = raw
        self.door = door
        self.upstream = upstream
        self.declines: list[Decline] = []
        self.forwarding: Forwarding | None = None
        self.intercepted: object = None
        self.chaos: AttachedChaos | None = None
        self.injected: list[dict[str, Any]] = []
        self._settled = False
        self._conversation: Any = _NOT_YET

    @property
    def method(self) -> str:
        return self.raw.method

    @property
    def host(self) -> str:
        return self.raw.host

    @property
    def port(self) -> int:
        return self.raw.port

    @property
    def body(self) -> bytes:
        return self.raw.body

    @property
    def path(self) -> str:
        if not self._settled:
            self._settle()
        path: str = self._path
        return path

    @property
    def query(self) -> Mapping[str, str]:
        if not self._settled:
            self._settle()
        query: Mapping[str, str] = self._query
        return query

    @property
    def headers(self) -> Mapping[str, str]:
        if not self._settled:
            self._settle()
        headers: Mapping[str, str] = self._headers
        return headers

    @property
    def route(self) -> Route | None:
        if not self._settled:
            self._settle()
        route: Route | None = self._route
        return route

    @property
    def json(self) -> Any:
        if not self._settled:
            self._settle()
        return self._json

    @property
    def codec(self) -> ChatCodec | None:
        if not self._settled:
            self._settle()
        codec: ChatCodec | None = self._codec
        return codec

    @property
    def turn(self) -> int:
        if not self._settled:
            self._settle()
        turn: int = self._turn
        return turn

    @property
    def model(self) -> str | None:
        if not self._settled:
            self._settle()
        model: str | None = self._model
        return model

    @property
    def conversation(self) -> Conversation | None:
        """The decoded chat request (or the conversation a count-token request counts); None when it is not
        one, or does not decode."""
        if self._conversation is _NOT_YET:
            json = self.json
            counter = token_counter(self.route) if self.codec is None else None
            if counter is not None and self.route is not None:
                self._conversation = _counted_conversation(counter, self.route, self.raw.body)
            else:
                self._conversation = decode_conversation(self.codec, Parsed(json) if json is not None else None)
        conversation: Conversation | None = self._conversation
        return conversation

    @property
    def decoded(self) -> bool:
        """Whether `conversation` has been read (and costs nothing more)."""
        return self._conversation is not _NOT_YET

    def decline(self, stage: str, reason: str, detail: object = None) -> None:
        self.declines.append(Decline(stage, reason, detail))

    def _settle(self) -> None:
        raw = self.raw
        self._headers = headers = {name.lower(): value for name, value in raw.headers}
        path, question, query = raw.path.partition("?")
        self._path = path
        self._query = dict(parse_qsl(query)) if question and query else {}
        self._route = self._json = self._codec = self._model = None
        self._turn = 0
        self._settled = True
        try:
            route = detect(raw.host, raw.path, headers, method=raw.method, scheme=raw.scheme, port=raw.port)
            parsed = _json(raw.body)
            codec = None
            if route is not None:
                route = with_body(route, parsed if isinstance(parsed, dict) else None)
                codec = chat_codec(route)
            asked = parsed.get("model") if isinstance(parsed, dict) else None
            turn = codec.assistant_turns(parsed) if codec is not None else 0
        except Exception:  # still a request: an expectation about hosts and paths (or none) decides what it gets
            logger.debug("could not read %s %s%s as its API's", raw.method, raw.host, raw.path, exc_info=True)
            return
        self._route = route
        self._json = parsed
        self._codec = codec
        self._model = asked if isinstance(asked, str) else route.model if route is not None else None
        self._turn = turn


def decode_conversation(codec: ChatCodec | None, body: bytes | Parsed | None) -> Conversation | None:
    """Decoding failures are not errors here: a request that does not decode is simply not a conversation,
    and what needs one says so (a mock predicate names it in the miss)."""
    if codec is None or body is None:
        return None
    try:
        return codec.decode_request(body)
    except Exception:
        return None


def _counted_conversation(counter: TokenCounter, route: Route, body: bytes) -> Conversation | None:
    try:
        return counter.read(body, route)
    except Exception:
        return None


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None
