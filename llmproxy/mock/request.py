"""A live request as the mock engine sees it: where it goes, which API it speaks, its completed assistant
turns, and the conversation it carries, decoded only when something reads it."""

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

import orjson

from llmproxy.model import Conversation, Route
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.node import Parsed
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect, with_body

_NOT_YET: Final = object()
logger = logging.getLogger(__name__)


@dataclass(slots=True)
class MockRequest:
    """`headers` keys are lower case; `body` the raw body and `json` the same parsed (None when it is not
    JSON); `codec` the chat API the request speaks (None for anything else) and `turn` its completed assistant
    turns, counted without a decode: every answer's ids need them."""

    route: Route | None
    host: str
    path: str  # without the query
    method: str = "POST"
    headers: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    model: str | None = None
    body: bytes = b""
    json: Any = None
    codec: ChatCodec | None = None
    turn: int = 0
    _conversation: Any = field(default=_NOT_YET, repr=False)

    @property
    def conversation(self) -> Conversation | None:
        """The decoded chat request, decoded on first use: only conversation predicates, usage estimates and
        the log's details read it, and a decode costs more than all the rest of an answer."""
        if self._conversation is _NOT_YET:
            self._conversation = decode_conversation(self.codec, Parsed(self.json) if self.json is not None else None)
        conversation: Conversation | None = self._conversation
        return conversation

    @property
    def decoded(self) -> bool:
        """Whether `conversation` has been read (and costs nothing more)."""
        return self._conversation is not _NOT_YET


def mock_request(raw: RawRequest) -> MockRequest:
    """The request as the engine sees it. One whose body or URL cannot be read as its API's is still a
    request: an expectation about hosts and paths (or none) decides what it gets."""
    try:
        return _read(raw)
    except Exception:
        logger.debug("llmproxy mock could not read %s %s%s", raw.method, raw.host, raw.path, exc_info=True)
        return MockRequest(route=None, host=raw.host, path=raw.path.partition("?")[0], method=raw.method, body=raw.body)


def _read(raw: RawRequest) -> MockRequest:
    headers = {name.lower(): value for name, value in raw.headers}
    parts = urlsplit(raw.path)
    route = detect(raw.host, raw.path, headers, method=raw.method, scheme=raw.scheme, port=raw.port)
    parsed = _json(raw.body)
    codec = None
    if route is not None:
        route = with_body(route, parsed if isinstance(parsed, dict) else None)
        codec = chat_codec(route)
    asked = parsed.get("model") if isinstance(parsed, dict) else None
    return MockRequest(
        route=route,
        host=raw.host,
        path=parts.path,
        method=raw.method,
        headers=headers,
        query=dict(parse_qsl(parts.query)) if parts.query else {},
        model=asked if isinstance(asked, str) else route.model if route is not None else None,
        body=raw.body,
        json=parsed,
        codec=codec,
        turn=codec.assistant_turns(parsed) if codec is not None else 0,
    )


def decode_conversation(codec: ChatCodec | None, body: bytes | Parsed | None) -> Conversation | None:
    """Decoding failures are not errors here: a request that does not decode is simply not a conversation,
    and predicates that need one say so in the miss."""
    if codec is None or body is None:
        return None
    try:
        return codec.decode_request(body)
    except Exception:
        return None


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None
