"""A live request as the mock engine sees it: where it goes, which API it speaks, its completed assistant
turns, and the conversation it carries, decoded only when something reads it."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

import orjson

from llmproxy.cassette.capture import RawRequest
from llmproxy.model import Conversation, Route
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect, with_body

_NOT_YET: Final = object()


class ChatBody:
    """The body of a request to a chat API. Its completed assistant turns are counted at once: every answer's
    ids need them. Its conversation is decoded on first use: only conversation predicates, usage estimates
    and the log's details read it, and a decode costs more than all the rest of an answer."""

    __slots__ = ("_conversation", "body", "codec", "turn")

    def __init__(self, codec: ChatCodec, body: bytes, parsed: Any) -> None:
        self.codec = codec
        self.body = body
        self.turn = codec.assistant_turns(parsed)
        self._conversation: Any = _NOT_YET

    @property
    def conversation(self) -> Conversation | None:
        """None when the body does not decode: a request that does not decode is simply not a conversation,
        and predicates that need one say so in the miss."""
        if self._conversation is _NOT_YET:
            try:
                self._conversation = self.codec.decode_request(self.body)
            except Exception:
                self._conversation = None
        conversation: Conversation | None = self._conversation
        return conversation


@dataclass(slots=True)
class MockRequest:
    """`headers` keys are lower case; `body` the raw body and `json` the same parsed (None when it is not
    JSON); `chat` the body of a chat request (None for anything else)."""

    route: Route | None
    host: str
    path: str  # without the query
    headers: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    model: str | None = None
    body: bytes = b""
    json: Any = None
    chat: ChatBody | None = None

    @property
    def conversation(self) -> Conversation | None:
        return self.chat.conversation if self.chat is not None else None

    @property
    def turn(self) -> int:
        """Completed assistant turns (0 for what is not a chat request)."""
        return self.chat.turn if self.chat is not None else 0


def mock_request(raw: RawRequest) -> MockRequest:
    headers = {name.lower(): value for name, value in raw.headers}
    parts = urlsplit(raw.path)
    route = detect(raw.host, raw.path, headers, method=raw.method, scheme=raw.scheme)
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
        headers=headers,
        query=dict(parse_qsl(parts.query)) if parts.query else {},
        model=asked if isinstance(asked, str) else route.model if route is not None else None,
        body=raw.body,
        json=parsed,
        chat=ChatBody(codec, raw.body, parsed) if codec is not None else None,
    )


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None
