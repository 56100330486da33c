"""Provider detection by host, by path on any host (gateways, custom base URLs), and by tell-tale headers."""

import pytest

from llmproxy.model import Operation, Provider, Route
from llmproxy.providers.routes import detect, with_body

ANT, OAI = Provider.ANTHROPIC, Provider.OPENAI


@pytest.mark.parametrize(
    ("host", "path", "method", "headers", "expected"),
    [
        ("api.anthropic.com", "/v1/messages", "POST", {}, (ANT, Operation.MESSAGES, None)),
        ("api.anthropic.com", "/v1/messages?beta=true", "POST", {}, (ANT, Operation.MESSAGES, None)),
        ("api.anthropic.com", "/v1/messages/count_tokens", "POST", {}, (ANT, Operation.COUNT_TOKENS, False)),
        ("api.anthropic.com", "/v1/messages/count_tokens?beta=true", "POST", {}, (ANT, Operation.COUNT_TOKENS, False)),
        ("api.anthropic.com", "/v1/models", "GET", {}, (ANT, Operation.LIST_MODELS, False)),
        ("api.anthropic.com", "/v1/models/claude-x", "GET", {}, (ANT, Operation.LIST_MODELS, False)),
        ("api.openai.com", "/v1/chat/completions", "POST", {}, (OAI, Operation.CHAT_COMPLETIONS, None)),
        ("api.openai.com", "/v1/responses", "POST", {}, (OAI, Operation.RESPONSES, None)),
        ("api.openai.com", "/v1/embeddings", "POST", {}, (OAI, Operation.EMBEDDINGS, False)),
        ("api.openai.com", "/v1/models", "GET", {}, (OAI, Operation.LIST_MODELS, False)),
        ("chatgpt.com", "/backend-api/codex/responses", "POST", {}, (OAI, Operation.RESPONSES, None)),
        # gateways and custom base URLs: recognised by path on any host, with any prefix
        ("gw.example.com", "/anthropic/v1/messages", "POST", {}, (ANT, Operation.MESSAGES, None)),
        ("127.0.0.1", "/v1/chat/completions", "POST", {}, (OAI, Operation.CHAT_COMPLETIONS, None)),
        ("openrouter.ai", "/api/v1/chat/completions", "POST", {}, (OAI, Operation.CHAT_COMPLETIONS, None)),
        ("api.deepseek.com", "/chat/completions", "POST", {}, (OAI, Operation.CHAT_COMPLETIONS, None)),
        ("proxy.internal", "/openai/v1/responses", "POST", {}, (OAI, Operation.RESPONSES, None)),
        # /v1/models is shared: Anthropic's headers single it out on a foreign host
        ("localhost", "/v1/models", "GET", {"Anthropic-Version": "2023-06-01"}, (ANT, Operation.LIST_MODELS, False)),
        ("localhost", "/v1/models", "GET", {"authorization": "Bearer x"}, (OAI, Operation.LIST_MODELS, False)),
        # host names are case-insensitive and may carry a trailing dot; trailing slashes are ignored
        ("API.Anthropic.com.", "/v1/messages/", "POST", {}, (ANT, Operation.MESSAGES, None)),
    ],
)
def test_detect(
    host: str, path: str, method: str, headers: dict[str, str], expected: tuple[Provider, Operation, bool | None]
) -> None:
    assert detect(host, path, headers, method=method) == Route(*expected)


@pytest.mark.parametrize(
    ("host", "path", "method"),
    [
        ("api.anthropic.com", "/v1/messages", "GET"),  # wrong method
        ("example.com", "/v1/messagesx", "POST"),
        ("example.com", "/surveys/responses", "POST"),  # too generic to be the Responses API
        ("example.com", "/", "GET"),
        ("api.openai.com", "/v1/files", "POST"),
    ],
)
def test_not_an_llm_api(host: str, path: str, method: str) -> None:
    assert detect(host, path, {}, method=method) is None


def test_body_settles_streaming() -> None:
    route = detect("api.anthropic.com", "/v1/messages")
    assert route is not None
    assert with_body(route, {"stream": True}).streaming is True
    assert with_body(route, {"stream": False}).streaming is False
    assert with_body(route, {"stream": "yes"}).streaming is False
    assert with_body(route, None).streaming is False
    listing = detect("api.openai.com", "/v1/models", method="GET")
    assert listing is not None
    assert with_body(listing, {"stream": True}).streaming is False
