"""A live request as the mock engine sees it: where it goes, which API it speaks, and the conversation it
carries, decoded once."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from llmproxy.cassette.capture import RawRequest
from llmproxy.model import Conversation, Route
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect, with_body


@dataclass(slots=True)
class MockRequest:
    """`headers` keys are lower case; `conversation` is the decoded chat request (None when the request is
    not a chat request or does not decode); `body` the raw body and `json` the same parsed, for the answer's
    encoding."""

    route: Route | None
    host: str
    path: str  # without the query
    headers: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    conversation: Conversation | None = None
    model: str | None = None
    body: bytes = b""
    json: Any = None  # the body parsed, once: None when it is not JSON


def mock_request(raw: RawRequest) -> MockRequest:
    """Decoding failures are not errors here: a request that does not decode is simply not a conversation,
    and predicates that need one say so in the miss."""
    headers = {name.lower(): value for name, value in raw.headers}
    parts = urlsplit(raw.path)
    route = detect(raw.host, raw.path, headers, method=raw.method, scheme=raw.scheme)
    parsed = _json(raw.body)
    conversation = None
    if route is not None:
        route = with_body(route, parsed if isinstance(parsed, dict) else None)
        codec = chat_codec(route)
        if codec is not None:
            try:
                conversation = codec.decode_request(raw.body)
            except Exception:
                conversation = None
    model = (conversation.model if conversation else None) or (route.model if route else None)
    if model is None and isinstance(parsed, dict) and isinstance(parsed.get("model"), str):
        model = parsed["model"]
    return MockRequest(
        route=route,
        host=raw.host,
        path=parts.path,
        headers=headers,
        query=dict(parse_qsl(parts.query)) if parts.query else {},
        conversation=conversation,
        model=model,
        body=raw.body,
        json=parsed,
    )


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None
