"""Provider detection by host, by path on any host (gateways, custom base URLs), and by tell-tale headers."""

import pytest

from llmproxy.model import Operation, Provider, Route
from llmproxy.providers.routes import RULES, detect, with_body

ANT, OAI, BR = Provider.ANTHROPIC, Provider.OPENAI, Provider.BEDROCK
CONVERSE, INVOKE = Operation.CONVERSE, Operation.INVOKE


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
    route = detect(host, path, headers, method=method)
    assert route is not None
    assert (route.provider, route.operation, route.streaming) == expected


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


@pytest.mark.parametrize(
    ("host", "path", "expected"),
    [
        ("bedrock-runtime.us-east-1.amazonaws.com", "/model/anthropic.claude-v2/invoke", (INVOKE, False)),
        (
            "bedrock-runtime.us-east-1.amazonaws.com",
            "/model/anthropic.claude-v2/invoke-with-response-stream",
            (INVOKE, True),
        ),
        ("bedrock-runtime.us-east-1.amazonaws.com", "/model/anthropic.claude-v2/converse", (CONVERSE, False)),
        ("bedrock-runtime.us-east-1.amazonaws.com", "/model/anthropic.claude-v2/converse-stream", (CONVERSE, True)),
        ("gw.example.com", "/bedrock/model/anthropic.claude-v2/converse-stream", (CONVERSE, True)),
    ],
)
def test_bedrock_operations(host: str, path: str, expected: tuple[Operation, bool]) -> None:
    assert detect(host, path) == Route(BR, *expected, model="anthropic.claude-v2")


@pytest.mark.parametrize(
    ("path", "model"),
    [
        # botocore encodes ':' and '/', the anthropic SDK keeps ':'; either way the id is decoded
        ("/model/us.anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke", "us.anthropic.claude-3-5-haiku-20241022-v1:0"),
        ("/model/anthropic.claude-x:0/invoke", "anthropic.claude-x:0"),
        (
            "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-x/converse",
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-x",
        ),
        # an ARN whose '/' arrived decoded still names the whole id
        (
            "/model/arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-v2/invoke",
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-v2",
        ),
        ("/model/amazon.nova-lite-v1%3A0/converse?x=1", "amazon.nova-lite-v1:0"),
    ],
)
def test_bedrock_model_ids_are_url_decoded(path: str, model: str) -> None:
    route = detect("bedrock-runtime.us-east-1.amazonaws.com", path)
    assert route is not None
    assert route.model == model


@pytest.mark.parametrize(
    "host",
    [
        "bedrock-runtime.us-east-1.amazonaws.com",
        "bedrock-runtime-fips.us-gov-west-1.amazonaws.com",
        "vpce-0a1b2c3d-abcd.bedrock-runtime.eu-central-1.vpce.amazonaws.com",
        "bedrock-runtime.cn-north-1.amazonaws.com.cn",
    ],
)
def test_bedrock_hosts(host: str) -> None:
    rule = next(r for r in RULES if r.provider is BR)
    assert rule.serves(host)
    assert not rule.serves("bedrock.us-east-1.amazonaws.com")  # the control plane, not the runtime


def test_bedrock_paths_need_an_operation_and_a_model() -> None:
    for path in ["/model//converse", "/model/x/converse/extra", "/model/x/tokens", "/models/x/converse"]:
        assert detect("bedrock-runtime.us-east-1.amazonaws.com", path) is None, path
    assert detect("bedrock-runtime.us-east-1.amazonaws.com", "/model/x/converse", method="GET") is None


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


AZ, OLL = Provider.AZURE, Provider.OLLAMA
AZURE_HOST = "my-res.openai.azure.com"


@pytest.mark.parametrize(
    ("host", "path", "headers", "expected"),
    [
        # Azure deployment paths: the deployment is the model, on any host (the path is Azure's alone)
        (AZURE_HOST, "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", {}, (AZ, "gpt-4o")),
        ("my-res.cognitiveservices.azure.com", "/openai/deployments/d1/chat/completions", {}, (AZ, "d1")),
        ("gw.example.com", "/openai/deployments/my%20dep/chat/completions", {}, (AZ, "my dep")),
        ("127.0.0.1", "/openai/deployments/d1/chat/completions", {"api-key": "k"}, (AZ, "d1")),
        (AZURE_HOST, "/openai/deployments/emb/embeddings?api-version=2024-10-21", {}, (AZ, "emb")),
        ("127.0.0.1", "/openai/deployments/emb/embeddings", {}, (AZ, "emb")),
        # Responses have no deployment segment; /openai/responses is Azure's wherever it is
        (AZURE_HOST, "/openai/responses?api-version=2025-04-01-preview", {}, (AZ, None)),
        ("127.0.0.1", "/openai/responses", {}, (AZ, None)),
        # the v1 paths are OpenAI's too: Azure's on Azure hosts or with the api-key header
        (AZURE_HOST, "/openai/v1/chat/completions", {}, (AZ, None)),
        (AZURE_HOST, "/openai/v1/responses", {}, (AZ, None)),
        (AZURE_HOST, "/openai/v1/embeddings", {}, (AZ, None)),
        ("proxy.internal", "/openai/v1/chat/completions", {"Api-Key": "k"}, (AZ, None)),
        ("proxy.internal", "/openai/v1/chat/completions", {"authorization": "Bearer k"}, (OAI, None)),
        ("proxy.internal", "/openai/v1/responses", {}, (OAI, None)),
        ("proxy.internal", "/openai/v1/embeddings", {}, (OAI, None)),
        # OpenAI paths on an Azure host outside /openai/ are not stolen either way
        ("api.openai.com", "/v1/chat/completions", {"api-key": "k"}, (OAI, None)),
    ],
)
def test_detect_azure(host: str, path: str, headers: dict[str, str], expected: tuple[Provider, str | None]) -> None:
    route = detect(host, path, headers)
    assert route is not None
    assert (route.provider, route.model) == expected
    bare = path.split("?")[0]
    operation = (
        Operation.EMBEDDINGS
        if bare.endswith("embeddings")
        else Operation.RESPONSES
        if bare.endswith("responses")
        else Operation.CHAT_COMPLETIONS
    )
    assert route.operation is operation
    assert route.streaming is (False if operation is Operation.EMBEDDINGS else None)


@pytest.mark.parametrize(
    ("host", "path", "expected"),
    [
        ("127.0.0.1", "/api/chat", Route(OLL, Operation.CHAT)),
        ("localhost", "/api/generate", Route(OLL, Operation.GENERATE)),
        ("ollama.com", "/api/chat", Route(OLL, Operation.CHAT)),
        ("gpu-box.lan", "/api/chat", Route(OLL, Operation.CHAT)),
        ("gw.example.com", "/ollama/api/generate/", Route(OLL, Operation.GENERATE)),
        # Ollama's OpenAI-compatible API is OpenAI's, on Ollama's hosts too (served by Ollama: the vendor)
        ("127.0.0.1", "/v1/chat/completions", Route(OAI, Operation.CHAT_COMPLETIONS)),
        ("localhost", "/v1/chat/completions", Route(OAI, Operation.CHAT_COMPLETIONS)),
        ("ollama.com", "/v1/chat/completions", Route(OAI, Operation.CHAT_COMPLETIONS, vendor="ollama")),
        ("localhost", "/v1/responses", Route(OAI, Operation.RESPONSES)),
        ("localhost", "/v1/embeddings", Route(OAI, Operation.EMBEDDINGS, False)),
    ],
)
def test_detect_ollama(host: str, path: str, expected: Route) -> None:
    assert detect(host, path, {}) == expected


def test_ollama_streams_unless_the_body_says_not() -> None:
    route = detect("127.0.0.1", "/api/chat")
    assert route is not None
    assert with_body(route, {"model": "m"}).streaming is True
    assert with_body(route, {"stream": None}).streaming is True
    assert with_body(route, {"stream": True}).streaming is True
    assert with_body(route, {"stream": False}).streaming is False
    azure = detect(AZURE_HOST, "/openai/deployments/d/chat/completions")
    assert azure is not None
    assert with_body(azure, {"model": "m"}).streaming is False


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
