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


GEM, GCA = Provider.GEMINI, Provider.GEMINI_CODE_ASSIST
GENERATE, COUNT = Operation.GENERATE_CONTENT, Operation.COUNT_TOKENS


GL, VERTEX = "generativelanguage.googleapis.com", "/v1/projects/p/locations/us-central1/publishers/google/models"


@pytest.mark.parametrize(
    ("host", "path", "route"),
    [
        (GL, "/v1beta/models/gemini-2.5-flash:generateContent", Route(GEM, GENERATE, False, "gemini-2.5-flash")),
        (GL, "/v1/models/gemini-2.5:streamGenerateContent?alt=sse", Route(GEM, GENERATE, True, "gemini-2.5")),
        (GL, "/v1beta/models/gemini-x:streamGenerateContent", Route(GEM, GENERATE, True, "gemini-x")),
        (GL, "/v1beta/models/gemini-x%3AcountTokens", Route(GEM, COUNT, False, "gemini-x")),
        ("gw.example.com", "/google/v1beta/models/gemini-x%3agenerateContent", Route(GEM, GENERATE, False, "gemini-x")),
        (
            "us-central1-aiplatform.googleapis.com",
            f"{VERTEX}/g-001:streamGenerateContent",
            Route(GEM, GENERATE, True, "g-001"),
        ),
        (
            "aiplatform.googleapis.com",
            f"{VERTEX.replace('v1', 'v1beta1')}/g:countTokens",
            Route(GEM, COUNT, False, "g"),
        ),
        (
            "aiplatform.googleapis.com",
            "/v1/publishers/google/models/g:generateContent",
            Route(GEM, GENERATE, False, "g"),
        ),
        ("cloudcode-pa.googleapis.com", "/v1internal:streamGenerateContent?alt=sse", Route(GCA, GENERATE, True)),
        ("cloudcode-pa.googleapis.com", "/v1internal:generateContent", Route(GCA, GENERATE, False)),
        ("127.0.0.1", "/v1internal%3AcountTokens", Route(GCA, COUNT, False)),
    ],
)
def test_gemini_routes(host: str, path: str, route: Route) -> None:
    assert detect(host, path) == route


@pytest.mark.parametrize(
    "path",
    [
        "/v1beta/models/gemini-x:embedContent",  # another helper's
        "/v1beta/models/gemini-x:generateContentX",
        "/v1beta/models/a/b:generateContent",
        "/v1internal:loadCodeAssist",
    ],
)
def test_not_gemini_chat(path: str) -> None:
    route = detect("generativelanguage.googleapis.com", path)
    assert route is None or route.provider not in (GEM, GCA) or route.operation is not GENERATE
