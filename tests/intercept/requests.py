"""Plain requests for the intercept's pure core: what it reads of a request, detected as the chain does."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from llmproxy.model import Conversation, Route
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect


@dataclass
class Request:
    host: str = "api.anthropic.com"
    path: str = "/v1/messages"
    json: Any = field(
        default_factory=lambda: {
            "model": "claude-sonnet-4-5",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "hi"}],
        }
    )
    port: int = 443
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def body(self) -> bytes:
        return orjson.dumps(self.json)

    @property
    def route(self) -> Route | None:
        return detect(self.host, self.path, self.headers)

    @property
    def model(self) -> str | None:
        model = self.json.get("model") if isinstance(self.json, dict) else None
        return model if isinstance(model, str) else None

    @property
    def conversation(self) -> Conversation | None:
        route = self.route
        codec = chat_codec(route) if route is not None else None
        return codec.decode_request(self.body) if codec is not None else None


def openai(**json: Any) -> Request:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], **json}
    return Request("api.openai.com", "/v1/chat/completions", body)


class Clock:
    """A clock the test moves."""

    def __init__(self, now: float = 1_767_225_600.0) -> None:  # 2026-01-01T00:00:00Z
        self.now = now

    def __call__(self) -> float:
        return self.now
