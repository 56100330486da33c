"""Compatible vendors by host (with or without /v1), the Responses lifecycle routes, and routes the user
declares (`--route HOST=CODEC|VENDOR`)."""

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from llmproxy.errors import LlmproxyError
from llmproxy.model import Operation, Provider, Route
from llmproxy.providers import declared
from llmproxy.providers.compatible import VENDORS
from llmproxy.providers.routes import detect, is_provider_host

OAI, ANT = Provider.OPENAI, Provider.ANTHROPIC
CHAT, RESPONSES = Operation.CHAT_COMPLETIONS, Operation.RESPONSES


def _base(vendor_base_url: str) -> tuple[str, int | None, str]:
    url = urlsplit(vendor_base_url.replace("{region}", "us-east-1"))
    return url.hostname or "", url.port, url.path.rstrip("/")


@pytest.mark.parametrize("vendor", VENDORS, ids=lambda v: f"{v.name}:{v.port or v.hosts[:1]}")
def test_every_vendor_is_named_at_its_documented_base_url(vendor: object) -> None:
    assert hasattr(vendor, "base_url")
    host, port, prefix = _base(vendor.base_url)  # type: ignore[attr-defined]
    route = detect(host, f"{prefix}/chat/completions", {}, port=port)
    assert route is not None
    assert (route.provider, route.operation, route.vendor) == (OAI, CHAT, vendor.name)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("host", "path", "port", "expected"),
    [
        # with or without /v1
        ("api.deepseek.com", "/responses", None, Route(OAI, RESPONSES, vendor="deepseek")),
        ("api.deepseek.com", "/v1/responses", None, Route(OAI, RESPONSES, vendor="deepseek")),
        ("api.deepseek.com", "/chat/completions", None, Route(OAI, CHAT, vendor="deepseek")),
        ("api.deepseek.com", "/embeddings", None, Route(OAI, Operation.EMBEDDINGS, False, vendor="deepseek")),
        # a vendor's Anthropic-compatible API is named after the vendor too
        ("api.deepseek.com", "/anthropic/v1/messages", None, Route(ANT, Operation.MESSAGES, vendor="deepseek")),
        ("openrouter.ai", "/api/v1/responses", None, Route(OAI, RESPONSES, vendor="openrouter")),
        ("api.groq.com", "/openai/v1/chat/completions", None, Route(OAI, CHAT, vendor="groq")),
        ("router.huggingface.co", "/together/v1/chat/completions", None, Route(OAI, CHAT, vendor="huggingface")),
        ("api.perplexity.ai", "/chat/completions", None, Route(OAI, CHAT, vendor="perplexity")),
        ("bedrock-mantle.eu-west-1.api.aws", "/openai/v1/responses", None, Route(OAI, RESPONSES, vendor="bedrock")),
        # loopback servers by their default port; another port is nobody's in particular
        ("localhost", "/v1/responses", 1234, Route(OAI, RESPONSES, vendor="lmstudio")),
        ("127.0.0.1", "/v1/chat/completions", 8000, Route(OAI, CHAT, vendor="vllm")),
        ("localhost", "/v1/chat/completions", 11434, Route(OAI, CHAT, vendor="ollama")),
        ("localhost", "/v1/chat/completions", 9999, Route(OAI, CHAT)),
        # the owner's own host names no vendor; an owner's API on its own host neither
        ("api.openai.com", "/v1/responses", None, Route(OAI, RESPONSES)),
        ("localhost", "/api/chat", 11434, Route(Provider.OLLAMA, Operation.CHAT)),
        (
            "generativelanguage.googleapis.com",
            "/v1beta/openai/chat/completions",
            None,
            Route(OAI, CHAT, vendor="gemini"),
        ),
    ],
)
def test_compatible_hosts(host: str, path: str, port: int | None, expected: Route) -> None:
    assert detect(host, path, {}, port=port) == expected


def test_compatible_model_lists() -> None:
    route = detect("api.deepseek.com", "/models", {}, method="GET")
    assert route == Route(OAI, Operation.LIST_MODELS, False, vendor="deepseek")


@pytest.mark.parametrize(
    ("host", "path", "expected"),
    [
        # a host that serves its owner's API beside the compatible one: only the compatible API's own paths
        # are OpenAI's, the rest is the owner's (its error shape answers a miss)
        ("generativelanguage.googleapis.com", "/v1beta/models", Route(Provider.GEMINI, Operation.LIST_MODELS, False)),
        (
            "generativelanguage.googleapis.com",
            "/v1/models/gemini-2.5-pro",
            Route(Provider.GEMINI, Operation.LIST_MODELS, False),
        ),
        (
            "generativelanguage.googleapis.com",
            "/v1beta/openai/models",
            Route(OAI, Operation.LIST_MODELS, False, vendor="gemini"),
        ),
        ("api.cohere.com", "/v1/models", Route(Provider.COHERE, Operation.LIST_MODELS, False)),
        ("api.cohere.ai", "/compatibility/v1/models", Route(OAI, Operation.LIST_MODELS, False, vendor="cohere")),
    ],
)
def test_a_model_list_is_the_api_of_its_path_on_an_owners_host(host: str, path: str, expected: Route) -> None:
    assert detect(host, path, {}, method="GET") == expected


@pytest.mark.parametrize(
    ("host", "path", "method"),
    [
        ("example.com", "/responses", "POST"),  # root paths are only a known vendor's
        ("example.com", "/responses/resp_1", "GET"),
        ("example.com", "/embeddings", "POST"),
        ("lm.local", "/api/v1/chat", "POST"),  # LM Studio's native API is not Cohere's /v1/chat
        ("ollama.com", "/api/embeddings", "GET"),
    ],
)
def test_generic_paths_elsewhere_are_not_claimed(host: str, path: str, method: str) -> None:
    assert detect(host, path, {}, method=method) is None


LIFE = "api.openai.com"


@pytest.mark.parametrize(
    ("host", "method", "path", "operation", "streaming"),
    [
        (LIFE, "GET", "/v1/responses/resp_1", Operation.RESPONSE_RETRIEVE, False),
        (LIFE, "GET", "/v1/responses/resp_1?stream=true&starting_after=7", Operation.RESPONSE_RETRIEVE, True),
        (LIFE, "GET", "/v1/responses/resp_1?include[]=x&stream=false", Operation.RESPONSE_RETRIEVE, False),
        (LIFE, "POST", "/v1/responses/resp_1/cancel", Operation.RESPONSE_CANCEL, False),
        (LIFE, "DELETE", "/v1/responses/resp_1", Operation.RESPONSE_DELETE, False),
        (LIFE, "GET", "/v1/responses/resp_1/input_items?limit=20", Operation.RESPONSE_INPUT_ITEMS, False),
        (LIFE, "POST", "/v1/responses/input_tokens", Operation.COUNT_TOKENS, False),
        (LIFE, "POST", "/v1/responses/compact", Operation.RESPONSE_COMPACT, False),
        ("chatgpt.com", "POST", "/backend-api/codex/responses/compact", Operation.RESPONSE_COMPACT, False),
        ("gw.example.com", "GET", "/openai/v1/responses/resp_1", Operation.RESPONSE_RETRIEVE, False),
        ("api.deepseek.com", "GET", "/responses/resp_1", Operation.RESPONSE_RETRIEVE, False),
    ],
)
def test_responses_lifecycle(host: str, method: str, path: str, operation: Operation, streaming: bool) -> None:
    route = detect(host, path, {}, method=method)
    assert route is not None
    assert (route.provider, route.operation, route.streaming) == (OAI, operation, streaming)


def test_count_tokens_of_every_provider() -> None:
    bedrock = detect("bedrock-runtime.us-east-1.amazonaws.com", "/model/anthropic.claude-sonnet-4%3A0/count-tokens")
    assert bedrock == Route(Provider.BEDROCK, Operation.COUNT_TOKENS, False, "anthropic.claude-sonnet-4:0")
    for host, path in [
        ("api.anthropic.com", "/v1/messages/count_tokens"),
        ("generativelanguage.googleapis.com", "/v1beta/models/gemini-2.5-flash:countTokens"),
        ("api.openai.com", "/v1/responses/input_tokens"),
    ]:
        route = detect(host, path)
        assert route is not None
        assert route.operation is Operation.COUNT_TOKENS, path


def test_cohere_chat() -> None:
    assert detect("api.cohere.com", "/v2/chat") == Route(Provider.COHERE, Operation.CHAT, version="v2")
    assert detect("api.cohere.ai", "/v1/chat") == Route(Provider.COHERE, Operation.CHAT, version="v1")
    fern = {"X-Fern-SDK-Name": "cohere"}  # the SDK pointed at a gateway
    assert detect("gw.example.com", "/cohere/v2/chat", fern) == Route(Provider.COHERE, Operation.CHAT, version="v2")
    compat = detect("api.cohere.ai", "/compatibility/v1/chat/completions")
    assert compat == Route(OAI, CHAT, vendor="cohere")


# declared routes ----------------------------------------------------------------------------------


def test_a_declared_codec_claims_every_path_of_its_host() -> None:
    assert detect("llm.corp.example", "/generate") is None
    with declared.declared(declared.parse_all(["llm.corp.example=openai-chat"])):
        assert detect("llm.corp.example", "/generate") == Route(OAI, CHAT)
        assert detect("LLM.corp.example.", "/x/y?z=1") == Route(OAI, CHAT)
        assert detect("other.example", "/generate") is None
        assert is_provider_host("llm.corp.example")
    assert detect("llm.corp.example", "/generate") is None  # forgotten when the session ends
    assert not is_provider_host("llm.corp.example")


def test_a_declared_codec_keeps_what_its_own_paths_say() -> None:
    with declared.declared(declared.parse_all(["gw.internal:8443/bedrock=bedrock-converse@corp"])):
        route = detect("gw.internal", "/bedrock/model/amazon.nova-pro-v1%3A0/converse-stream", port=8443)
        assert route == Route(Provider.BEDROCK, Operation.CONVERSE, True, "amazon.nova-pro-v1:0", vendor="corp")
        assert detect("gw.internal", "/bedrock/invoke", port=8443) == Route(
            Provider.BEDROCK, Operation.CONVERSE, False, vendor="corp"
        )
        assert detect("gw.internal", "/other/chat/completions", port=8443) == Route(OAI, CHAT)  # outside the path
        assert detect("gw.internal", "/bedrock/x", port=9000) is None  # another port


def test_a_declared_vendor_gets_compatible_paths_and_its_name() -> None:
    with declared.declared(declared.parse_all(["llm.corp.example=acme", "localhost:9090=deepseek"])):
        assert detect("llm.corp.example", "/responses") == Route(OAI, RESPONSES, vendor="acme")
        assert detect("llm.corp.example", "/v1/messages") == Route(ANT, Operation.MESSAGES, vendor="acme")
        assert detect("localhost", "/chat/completions", port=9090) == Route(OAI, CHAT, vendor="deepseek")
        assert not is_provider_host("localhost")  # loopback is never recorded whatever the path


def test_declarations_read_back() -> None:
    assert str(declared.parse("https://GW.example:8443/llm/=openai-responses@Acme")) == (
        "gw.example:8443/llm=openai-responses@acme"
    )
    assert str(declared.parse("gw.example=deepseek")) == "gw.example=deepseek"


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("gw.example", "expects HOST=CODEC or HOST=VENDOR"),
        ("=openai-chat", "expects HOST=CODEC"),
        ("gw.example:99999=openai-chat", "out of range"),
        ("gw.example=openai-chat@", "no vendor after '@'"),
        ("gw.example=nope@acme", "'nope' is not a codec (one of anthropic-messages, openai-chat"),
        ("gw.example=Not A Name", "neither a codec"),
    ],
)
def test_bad_declarations_say_what_is_wrong(spec: str, error: str) -> None:
    with pytest.raises(LlmproxyError, match="--route") as caught:
        declared.parse(spec)
    assert error in str(caught.value)


def test_the_docs_list_every_vendor() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "providers.md").read_text()
    for vendor in VENDORS:
        assert f"| {vendor.label} | `{vendor.name}` | `{vendor.base_url}` |" in docs, vendor.name
