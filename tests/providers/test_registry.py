"""From a detected route to the codec that reads and writes its bodies."""

import pytest

from llmproxy.providers.anthropic import MESSAGES
from llmproxy.providers.gemini import GENERATE
from llmproxy.providers.gemini_code_assist import CODE_ASSIST
from llmproxy.providers.openai_chat import CHAT
from llmproxy.providers.openai_responses import RESPONSES
from llmproxy.providers.registry import CHAT_CODECS, chat_codec
from llmproxy.providers.routes import detect


@pytest.mark.parametrize(
    ("host", "path", "codec"),
    [
        ("api.anthropic.com", "/v1/messages?beta=true", MESSAGES),
        ("api.openai.com", "/v1/chat/completions", CHAT),
        ("api.openai.com", "/v1/responses", RESPONSES),
        ("chatgpt.com", "/backend-api/codex/responses", RESPONSES),
        ("gw.example.com", "/anthropic/v1/messages", MESSAGES),
        ("generativelanguage.googleapis.com", "/v1beta/models/gemini-2.5-flash:generateContent", GENERATE),
        ("generativelanguage.googleapis.com", "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse", GENERATE),
        ("cloudcode-pa.googleapis.com", "/v1internal:streamGenerateContent?alt=sse", CODE_ASSIST),
    ],
)
def test_route_finds_its_codec(host: str, path: str, codec: object) -> None:
    route = detect(host, path)
    assert route is not None
    assert chat_codec(route) is codec


def test_non_chat_routes_have_no_chat_codec() -> None:
    for host, path, method in [
        ("api.anthropic.com", "/v1/messages/count_tokens", "POST"),
        ("api.openai.com", "/v1/embeddings", "POST"),
        ("api.openai.com", "/v1/models", "GET"),
        ("generativelanguage.googleapis.com", "/v1beta/models/gemini-2.5-flash:countTokens", "POST"),
        ("cloudcode-pa.googleapis.com", "/v1internal:countTokens", "POST"),
    ]:
        route = detect(host, path, method=method)
        assert route is not None
        assert chat_codec(route) is None


def test_codecs_are_registered_by_name_and_route() -> None:
    assert {name: (c.provider, c.operation) for name, c in CHAT_CODECS.items()} == {
        "anthropic-messages": ("anthropic", "messages"),
        "openai-chat": ("openai", "chat_completions"),
        "openai-responses": ("openai", "responses"),
        "gemini-generate": ("gemini", "generate_content"),
        "gemini-code-assist": ("gemini_code_assist", "generate_content"),
    }
