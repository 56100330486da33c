"""From a detected route to the codec that reads and writes its bodies."""

import json
import subprocess
import sys

import pytest

from llmproxy.model import Operation, Provider, Route
from llmproxy.providers import azure, ollama
from llmproxy.providers.anthropic import MESSAGES
from llmproxy.providers.bedrock import CONVERSE, INVOKE_ANTHROPIC
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
        ("127.0.0.1", "/api/chat", ollama.CHAT),
        ("localhost", "/api/generate", ollama.GENERATE),
        ("localhost", "/v1/chat/completions", CHAT),  # Ollama's OpenAI-compatible API
        ("res.openai.azure.com", "/openai/deployments/gpt-4o/chat/completions", azure.CHAT),
        ("res.openai.azure.com", "/openai/v1/chat/completions", azure.CHAT),
        ("res.openai.azure.com", "/openai/responses", azure.RESPONSES),
        ("res.openai.azure.com", "/openai/v1/responses", azure.RESPONSES),
        ("bedrock-runtime.us-east-1.amazonaws.com", "/model/amazon.nova-pro-v1%3A0/converse", CONVERSE),
        ("127.0.0.1", "/model/meta.llama3-70b-instruct-v1%3A0/converse-stream", CONVERSE),
        (
            "bedrock-runtime.eu-west-1.amazonaws.com",
            "/model/anthropic.claude-3-haiku-20240307-v1:0/invoke",
            INVOKE_ANTHROPIC,
        ),
        (
            "bedrock-runtime.us-west-2.amazonaws.com",
            "/model/us.anthropic.claude-x/invoke-with-response-stream",
            INVOKE_ANTHROPIC,
        ),
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
        ("res.openai.azure.com", "/openai/deployments/emb/embeddings", "POST"),
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
        "ollama-chat": ("ollama", "chat"),
        "ollama-generate": ("ollama", "generate"),
        "bedrock-converse": ("bedrock", "converse"),
        "bedrock-invoke-anthropic": ("bedrock", "invoke"),
        "gemini-generate": ("gemini", "generate_content"),
        "gemini-code-assist": ("gemini_code_assist", "generate_content"),
        "cohere-chat": ("cohere", "chat"),
        "cohere-chat-v1": ("cohere", "chat"),
    }


def test_cohere_chat_follows_the_urls_version() -> None:
    v2, v1 = detect("api.cohere.com", "/v2/chat"), detect("api.cohere.com", "/v1/chat")
    assert v2 is not None
    assert v1 is not None
    assert (chat_codec(v2), chat_codec(v1)) == (CHAT_CODECS["cohere-chat"], CHAT_CODECS["cohere-chat-v1"])


def test_azure_codecs_are_openai_codecs_with_azure_errors() -> None:
    for ours, theirs in [(azure.CHAT, CHAT), (azure.RESPONSES, RESPONSES)]:
        assert ours.provider == "azure"
        assert ours.encode_error is not theirs.encode_error
        assert (ours.decode_request, ours.encode_stream, ours.decode_error, ours.visible) == (
            theirs.decode_request,
            theirs.encode_stream,
            theirs.decode_error,
            theirs.visible,
        )


@pytest.mark.parametrize(
    ("model", "codec"),
    [
        ("anthropic.claude-3-5-sonnet-20241022-v2:0", INVOKE_ANTHROPIC),
        ("us.anthropic.claude-sonnet-4-20250514-v1:0", INVOKE_ANTHROPIC),
        ("global.anthropic.claude-opus-4-1-20250805-v1:0", INVOKE_ANTHROPIC),
        ("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-v2", INVOKE_ANTHROPIC),
        ("arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-x", INVOKE_ANTHROPIC),
        ("amazon.titan-embed-text-v2:0", None),  # embeddings: another codec's job
        ("cohere.embed-english-v3", None),
        ("meta.llama3-70b-instruct-v1:0", None),
        ("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3", None),  # opaque
        ("notanthropic.model", None),
        (None, None),
    ],
)
def test_invoke_codec_follows_the_model_id(model: str | None, codec: object) -> None:
    assert chat_codec(Route(Provider.BEDROCK, Operation.INVOKE, True, model)) is codec


def test_rate_limit_headers_by_route_even_where_there_is_no_chat() -> None:
    from datetime import UTC, datetime

    from llmproxy.providers.base import RateLimits
    from llmproxy.providers.registry import rate_limit_encoder

    now = datetime(2026, 1, 1, tzinfo=UTC)
    limits = RateLimits(requests_limit=5, requests_remaining=4)
    models = detect("api.anthropic.com", "/v1/models", method="GET")
    embeddings = detect("api.openai.com", "/v1/embeddings")
    voyage = detect("api.voyageai.com", "/v1/embeddings")
    assert models is not None
    assert embeddings is not None
    assert voyage is not None
    assert rate_limit_encoder(models)(limits, now)["anthropic-ratelimit-requests-limit"] == "5"
    assert rate_limit_encoder(embeddings)(limits, now)["x-ratelimit-remaining-requests"] == "4"
    assert rate_limit_encoder(voyage)(limits, now) == {}


def test_every_codec_is_filed_under_its_own_provider_and_operation() -> None:
    from llmproxy.providers import registry

    filings = registry.filings()
    for filing in filings:
        if filing.operation is None:  # the codec that speaks for its provider
            assert filing.codec.provider is filing.provider
        else:
            assert (filing.codec.provider, filing.codec.operation) == (filing.provider, filing.operation), filing
        if filing.name is not None:
            assert registry.named_codec(filing.name) is filing.codec
    assert sorted(filing.name for filing in filings if filing.name is not None) == sorted(registry.codec_names())


def test_a_provider_s_codecs_are_imported_when_a_route_first_needs_them() -> None:
    """A proxy that sees only Anthropic traffic never loads the other providers' codecs."""
    script = (
        "import json, sys\n"
        "from llmproxy.model import Operation, Provider, Route\n"
        "from llmproxy.providers.registry import chat_codec, facts\n"
        "loaded = lambda: sorted({m.split('.')[2] for m in sys.modules if m.startswith('llmproxy.providers.')})\n"
        "before = loaded()\n"
        "chat_codec(Route(Provider.ANTHROPIC, Operation.MESSAGES)), facts('anthropic')\n"
        "print(json.dumps([before, loaded()]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    before, after = (set(modules) for modules in json.loads(done.stdout))
    codecs = {"anthropic", "openai_chat", "openai_responses", "gemini", "bedrock", "ollama", "cohere_chat", "azure"}
    assert before & codecs == set()
    assert after & codecs == {"anthropic"}
