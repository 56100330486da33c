"""A request on its way through the answer chain, as every stage sees it: the wire request (`raw`), the door
it came through, and what it says (`Decoded`: the API it speaks, its JSON, its completed assistant turns…),
read once, the first time a stage asks, and shared by every stage; the conversation it carries is decoded only
when something reads it. A stage that passes a request on leaves a `Decline` saying why, so a request nothing
answers is refused with every reason; what the stages leave for the taps and the door is typed here too."""

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, NamedTuple
from urllib.parse import parse_qsl

import orjson

from llmproxy.chain.reply import ReplySource
from llmproxy.model import Conversation, Route
from llmproxy.model.exchange import RawRequest
from llmproxy.providers import declared
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.node import Parsed
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect, with_body
from llmproxy.providers.token_counts import TokenCounter, token_counter

TEST_ID_HEADER: Final = "x-llmproxy-test-id"  # scopes a request to one test of many sharing the proxy

if TYPE_CHECKING:  # the intercept's notes, read by its stage and tap: nothing of it is loaded for a request
    from llmproxy.intercept.decision import Pending
    from llmproxy.intercept.faults import Injected
    from llmproxy.intercept.profile import ChaosProfile

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
    profile: "ChaosProfile"
    take_back: Callable[[], None] | None = None


@dataclass(frozen=True, slots=True)
class Decline:
    """Why a stage passed a request on; `on_refusal`: what the stage does if nothing answers the request and it
    is refused (the replay counts its miss, with the closest recording); `on_answered`: what it does when
    something after it answers instead — a later stage or the upstream, named by its source (the mock logs the
    request as answered by the cassette behind it, not as its miss)."""

    stage: str
    reason: str
    on_refusal: Callable[[], None] | None = None
    on_answered: Callable[[ReplySource], None] | None = None


class Decoded(NamedTuple):
    """What a request says, read from its wire form: `path` (without the query) and `query`; `headers` by
    lower-case name; `json` the body parsed (None when it is not JSON); `route` the API it speaks (None for
    anything else); `codec` the chat API's codec and `turn` its completed assistant turns, counted without a
    decode; `model` the model it asks for. A request its API cannot read is still a request: its route, JSON
    and the rest are then left empty, and an expectation about hosts and paths (or none) decides what it gets.

    A named tuple, as `Reply` is: one is made for every request."""

    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    route: Route | None = None
    json: Any = None
    codec: ChatCodec | None = None
    turn: int = 0
    model: str | None = None

    @classmethod
    def of(cls, raw: RawRequest) -> "Decoded":
        headers = lower_headers(raw)
        path, query = split_target(raw.path)
        return cls.said(raw, path, query, headers, detected_api(raw, headers))

    @classmethod
    def said(
        cls, raw: RawRequest, path: str, query: Mapping[str, str], headers: Mapping[str, str], api: Route | None
    ) -> "Decoded":
        """`of`, its target and headers already read, and `api` the route `detected_api` found: the body read."""
        try:
            route, parsed, codec, model = spoken(raw, api)
            turn = codec.assistant_turns(parsed) if codec is not None else 0
        except Exception:
            logger.debug("could not read %s %s%s as its API's", raw.method, raw.host, raw.path, exc_info=True)
            return cls(path, query, headers)
        return cls(path, query, headers, route, parsed, codec, turn, model)


def lower_headers(raw: RawRequest) -> dict[str, str]:
    return {name.lower(): value for name, value in raw.headers}


def split_target(target: str) -> tuple[str, Mapping[str, str]]:
    """A request target's path (without the query) and its query's parameters."""
    path, question, query = target.partition("?")
    return path, dict(parse_qsl(query)) if question and query else {}


def detected_api(raw: RawRequest, headers: Mapping[str, str]) -> Route | None:
    """The API `raw`'s method, URL and headers name (`routes.detect`), before its body settles whether it
    streams; None for anything else, or what detection cannot read."""
    try:
        return detect(raw.host, raw.path, headers, method=raw.method, scheme=raw.scheme, port=raw.port)
    except Exception:
        logger.debug("could not read %s %s%s as its API's", raw.method, raw.host, raw.path, exc_info=True)
        return None


def spoken(raw: RawRequest, route: Route | None) -> tuple[Route | None, Any, ChatCodec | None, str | None]:
    """What `raw` says, given the API detected from its method, URL and headers (`routes.detect`): that API with
    what its body settles (streaming), its body parsed (None when it is not JSON), its chat API's codec and the
    model it asks for. Raises whatever an API's reading of a body it cannot read raises: a caller reads such a
    request as none of these."""
    parsed = body_json(raw.body)
    codec = None
    if route is not None:
        route = with_body(route, parsed if isinstance(parsed, dict) else None)
        codec = chat_codec(route)
    asked = parsed.get("model") if isinstance(parsed, dict) else None
    model = asked if isinstance(asked, str) else route.model if route is not None else None
    return route, parsed, codec, model


def detected(raw: RawRequest) -> Route | None:
    """`routes.detect`, once per method, URL and header names: a journal holds thousands of requests to the
    same few APIs (the last 256 are remembered, forgotten when the declared routes change). A GET may ask to
    become a WebSocket, which an upgrade header's value says: it is detected each time."""
    key = (raw.method, raw.scheme, raw.host, raw.port, raw.path, tuple(dict(raw.headers)))
    if raw.method != "GET" and key in _ROUTES:
        return _ROUTES[key]
    headers = {name.lower(): value for name, value in raw.headers}
    route = detect(raw.host, raw.path, headers, method=raw.method, scheme=raw.scheme, port=raw.port)
    if len(_ROUTES) >= 256:
        _ROUTES.clear()
    _ROUTES[key] = route
    return route


_ROUTES: dict[tuple[object, ...], Route | None] = {}
declared.when_changed(_ROUTES.clear)


class Incoming:
    """The request (`raw`), the door it came through and where it would go out (`upstream`); what it says
    (`decoded`, whose fields are also read as the request's own: `path`, `query`, `headers`, `route`, `json`,
    `codec`, `turn`, `model`). The body is parsed the first time one of `decoded`, `route`, `json`, `codec`,
    `turn` or `model` is read: a request only recorded is never parsed in the proxy (a 200 KB body costs a
    millisecond; the cassette writer parses it in its own process), and `api` says whether it is an LLM API's
    without the parse. `conversation` is decoded only when something reads it: a decode costs more than all the
    rest of a mocked answer.

    What stages and taps leave on it for each other: `declines` (for the chain, when nothing answers),
    `forwarding` (for the door, when it goes upstream), `intercepted` (the intercept stage's decision, which its
    tap carries out on the answer), `chaos` (a chaos profile the answering stage attached, e.g. a mock turn's)
    and `injected` (the faults put into its answer: the recording marks the exchange with them).

    `test_id` is the test it belongs to, for tests sharing one proxy: its `x-llmproxy-test-id` header, else the
    test the chain says is running (`Chain.use_test_id`, the pytest plugin's), else None."""

    __slots__ = (
        "_api",
        "_codec",
        "_conversation",
        "_decoded",
        "_headers",
        "_json",
        "_model",
        "_path",
        "_query",
        "_route",
        "_turn",
        "chaos",
        "declines",
        "door",
        "forwarding",
        "injected",
        "intercepted",
        "raw",
        "test_id",
        "upstream",
    )

    def __init__(self, raw: RawRequest, door: Door = Door.PROXY, upstream: Upstream | None = None) -> None:
        """`upstream`: where it would go out; None on a door that cannot forward (the relay)."""
        self.raw = raw
        self.door = door
        self.upstream = upstream
        self.declines: list[Decline] = []
        self.forwarding: Forwarding | None = None
        self.intercepted: Pending | None = None
        self.chaos: AttachedChaos | None = None
        self.injected: list[Injected] = []
        self._headers = headers = lower_headers(raw)
        self._path, self._query = split_target(raw.path)
        self._api = detected_api(raw, headers)
        self._decoded: Decoded | None = None  # until something reads the body (`_read`)
        self._route: Route | None = None
        self._json: Any = None
        self._codec: ChatCodec | None = None
        self._turn = 0
        self._model: str | None = None
        self._conversation: Any = _NOT_YET
        self.test_id: str | None = self._headers.get(TEST_ID_HEADER)

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
    def decoded(self) -> Decoded:
        decoded = self._decoded
        return decoded if decoded is not None else self._read()

    @property
    def body_read(self) -> bool:
        """Whether the body has been read (`decoded`): reading what it says then costs nothing more."""
        return self._decoded is not None

    def _read(self) -> Decoded:
        decoded = self._decoded = Decoded.said(self.raw, self._path, self._query, self._headers, self._api)
        # each field in a slot of its own, in `Decoded`'s order: every stage reads them, at a slot's cost
        _, _, _, self._route, self._json, self._codec, self._turn, self._model = decoded
        return decoded

    @property
    def path(self) -> str:
        return self._path

    @property
    def query(self) -> Mapping[str, str]:
        return self._query

    @property
    def headers(self) -> Mapping[str, str]:
        return self._headers

    @property
    def api(self) -> Route | None:
        """The API the request's method, URL and headers name, read without its body: whether it is an LLM API's
        call (a gate asks no more) costs no parse. Its `streaming` may be unsettled (`route` settles it), and
        it names the API even when the body is one the API cannot read (where `route` is None)."""
        return self._api

    @property
    def route(self) -> Route | None:
        if self._decoded is None:
            self._read()
        return self._route

    @property
    def json(self) -> Any:
        if self._decoded is None:
            self._read()
        return self._json

    @property
    def codec(self) -> ChatCodec | None:
        if self._decoded is None:
            self._read()
        return self._codec

    @property
    def turn(self) -> int:
        if self._decoded is None:
            self._read()
        return self._turn

    @property
    def model(self) -> str | None:
        if self._decoded is None:
            self._read()
        return self._model

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
    def conversation_decoded(self) -> bool:
        """Whether `conversation` has been read (and costs nothing more)."""
        return self._conversation is not _NOT_YET

    def decline(
        self,
        stage: str,
        reason: str,
        on_refusal: Callable[[], None] | None = None,
        on_answered: Callable[[ReplySource], None] | None = None,
    ) -> None:
        self.declines.append(Decline(stage, reason, on_refusal, on_answered))


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


def body_json(body: bytes) -> Any:
    """The body parsed, None when it is not JSON."""
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None
