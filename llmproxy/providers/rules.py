"""The route table: one rule per (provider, operation) — where its path is, which hosts are its own, which
headers single it out, whether the response streams. `routes.detect` reads it.

A rule matches by path suffix, so custom base URLs and gateways (``https://gw.example/anthropic/v1/messages``)
are recognised on any host; the rule's own hosts, and headers only that provider sends, break ties where two
APIs share a path (``/v1/models``). A rule marked `distinct` has a path no other API uses (Azure's
``/openai/deployments/{d}/…``), so it beats the generic rules on any host; one marked `compatible` also
serves the hosts of vendors that speak the API (`compatible.VENDORS`), which drop the `/v1` prefix. A rule's
path pattern may capture ``(?P<model>…)``: APIs that name the model in the URL (Azure, Gemini, Bedrock) fill
`Route.model` from it, URL-decoded.
"""

import re
from dataclasses import dataclass, field
from enum import StrEnum

from llmproxy.model import Operation, Provider
from llmproxy.providers.compatible import LOOPBACK_HOSTS, is_compatible_host


class Streaming(StrEnum):
    """Where a rule learns whether the response streams."""

    NEVER = "never"
    ALWAYS = "always"
    BODY_FLAG = "body_flag"  # `"stream": true` in the JSON request body
    BODY_FLAG_DEFAULT_TRUE = "body_flag_default_true"  # streams unless the body says `"stream": false` (Ollama)
    QUERY_FLAG = "query_flag"  # `?stream=true` in the URL (resuming a background response's stream)


@dataclass(frozen=True, slots=True)
class RouteRule:
    provider: Provider
    operation: Operation
    path: re.Pattern[str]
    streaming: Streaming = Streaming.NEVER
    methods: frozenset[str] = frozenset({"POST"})
    hosts: tuple[str, ...] = ()
    host_only: bool = False  # the path is too generic to trust on other hosts (unless `headers` say so)
    headers: tuple[str, ...] = field(default=())  # headers that single this provider out on other hosts
    distinct: bool = False  # the path alone names this provider: it beats generic rules on any host
    host_pattern: re.Pattern[str] | None = None  # for hosts named by region or endpoint (Bedrock)
    compatible: bool = False  # also the rule of the hosts of vendors that speak this API (compatible.py)
    websocket: bool = False  # also spoken over a WebSocket at the same path (llmproxy.providers.websocket)

    def serves(self, host: str, path: str | None = None) -> bool:
        """Whether `host` is this rule's own (for a `compatible` rule, `path` says whether it is the vendor's
        compatible API there; None: on any path)."""
        if self.host_pattern is not None and self.host_pattern.search(host):
            return True
        if self.compatible and is_compatible_host(host, path):
            return True
        return any(host == h or host.endswith("." + h) for h in self.hosts)


ANTHROPIC_HOSTS = ("api.anthropic.com",)
OPENAI_HOSTS = ("api.openai.com",)
CODEX_HOSTS = ("chatgpt.com",)
AZURE_HOSTS = ("openai.azure.com", "cognitiveservices.azure.com", "services.ai.azure.com")
OLLAMA_HOSTS = (*LOOPBACK_HOSTS, "ollama.com")
# Vertex AI's regional hosts (`us-central1-aiplatform.googleapis.com`) are not subdomains of the global
# one; the Gemini paths are specific enough to be recognised on them (and any host) by path alone.
GEMINI_HOSTS = ("generativelanguage.googleapis.com", "aiplatform.googleapis.com")
CODE_ASSIST_HOSTS = ("cloudcode-pa.googleapis.com",)
COHERE_HOSTS = ("api.cohere.com", "api.cohere.ai")
VOYAGE_HOSTS = ("api.voyageai.com", "ai.mongodb.com")  # ai.mongodb.com: Voyage keys starting `al-`
# `/v1beta/models/{m}`, Vertex `/v1/projects/{p}/locations/{l}/publishers/google/models/{m}`, and
# Vertex express mode `/v1/publishers/google/models/{m}`.
_GEMINI_MODEL = r"/v1[a-z0-9]*/(projects/[^/]+/locations/[^/]+/)?(publishers/[^/]+/)?models/(?P<model>[^/:]+)"
# bedrock-runtime[-fips].<region>.amazonaws.com[.cn], and VPC endpoints (vpce-….bedrock-runtime.<region>.vpce…)
BEDROCK_HOST = re.compile(r"(^|\.)bedrock-runtime(-fips)?\.[a-z0-9-]+\.(vpce\.)?amazonaws\.com(\.cn)?$")


def _bedrock(operation: Operation, action: str, streaming: Streaming) -> RouteRule:
    """`/model/{modelId}/{action}`: the id is URL-encoded (ARNs hold '/'), so it may span segments when decoded."""
    path = re.compile(rf"/model/(?P<model>.+)/{action}$")
    return RouteRule(Provider.BEDROCK, operation, path, streaming, host_pattern=BEDROCK_HOST)


def _gemini(method: str) -> re.Pattern[str]:
    return re.compile(f"{_GEMINI_MODEL}:{method}$")


def _code_assist(method: str) -> re.Pattern[str]:
    return re.compile(f"/v1internal:{method}$")


# where the Responses API lives: OpenAI's /v1, Codex's backend (`/openai/responses` is Azure's: its rule)
_RESPONSES = r"(/v1|/backend-api/codex)/responses"


def _responses_lifecycle() -> list[RouteRule]:
    """The Responses API beyond creating a response: polling a background response (or resuming its stream,
    `?stream=true&starting_after=N`), cancelling, deleting, listing input items, counting input tokens and
    Codex's remote compaction. Under `/v1` (or a gateway's `/openai`, Codex's backend) on any host; at the
    root only on compatible vendors' hosts."""
    rules = []
    for prefix, host_only in ((rf"({_RESPONSES}|/openai/responses)", False), (r"(^|/)responses", True)):
        for operation, tail, method in (
            (Operation.COUNT_TOKENS, "input_tokens", "POST"),
            (Operation.RESPONSE_COMPACT, "compact", "POST"),
            (Operation.RESPONSE_CANCEL, "[^/]+/cancel", "POST"),
            (Operation.RESPONSE_INPUT_ITEMS, "[^/]+/input_items", "GET"),
            (Operation.RESPONSE_RETRIEVE, "[^/]+", "GET"),  # streams with ?stream=true
            (Operation.RESPONSE_DELETE, "[^/]+", "DELETE"),
        ):
            rules.append(
                RouteRule(
                    Provider.OPENAI,
                    operation,
                    re.compile(f"{prefix}/{tail}$"),
                    Streaming.QUERY_FLAG if operation is Operation.RESPONSE_RETRIEVE else Streaming.NEVER,
                    methods=frozenset({method}),
                    hosts=() if host_only else OPENAI_HOSTS + CODEX_HOSTS,
                    host_only=host_only,
                    compatible=True,
                )
            )
    return rules


RULES: list[RouteRule] = [
    RouteRule(
        Provider.ANTHROPIC,
        Operation.COUNT_TOKENS,
        re.compile(r"/v1/messages/count_tokens$"),
        hosts=ANTHROPIC_HOSTS,
    ),
    RouteRule(
        Provider.ANTHROPIC,
        Operation.MESSAGES,
        re.compile(r"/v1/messages$"),
        Streaming.BODY_FLAG,
        hosts=ANTHROPIC_HOSTS,
        headers=("anthropic-version",),
    ),
    RouteRule(
        Provider.OPENAI,
        Operation.CHAT_COMPLETIONS,
        re.compile(r"(^|/)chat/completions$"),
        Streaming.BODY_FLAG,
        hosts=OPENAI_HOSTS,
    ),
    RouteRule(
        Provider.OPENAI,
        Operation.RESPONSES,
        re.compile(rf"{_RESPONSES}$"),
        Streaming.BODY_FLAG,
        hosts=OPENAI_HOSTS + CODEX_HOSTS,
        websocket=True,  # Codex CLI's default transport (docs/providers.md#responses-over-websocket)
    ),
    # compatible vendors drop the /v1 prefix (api.deepseek.com/responses): only on their hosts, the path
    # being too generic elsewhere
    RouteRule(
        Provider.OPENAI,
        Operation.RESPONSES,
        re.compile(r"(^|/)responses$"),
        Streaming.BODY_FLAG,
        host_only=True,
        compatible=True,
    ),
    *_responses_lifecycle(),
    RouteRule(Provider.OPENAI, Operation.EMBEDDINGS, re.compile(r"/v1/embeddings$"), hosts=OPENAI_HOSTS),
    RouteRule(
        Provider.OPENAI,
        Operation.EMBEDDINGS,
        re.compile(r"(?<!/api)/embeddings$"),  # not Ollama's legacy /api/embeddings
        host_only=True,
        compatible=True,
    ),
    RouteRule(
        Provider.OPENAI,
        Operation.LIST_MODELS,
        re.compile(r"/v1/models(/[^/]+)?$"),
        methods=frozenset({"GET"}),
        hosts=OPENAI_HOSTS,
    ),
    RouteRule(
        Provider.OPENAI,
        Operation.LIST_MODELS,
        re.compile(r"(^|/)models(/[^/]+)?$"),
        methods=frozenset({"GET"}),
        host_only=True,
        compatible=True,
    ),
    # after OpenAI's: on a foreign host, /v1/models is Anthropic's only when its headers say so
    RouteRule(
        Provider.ANTHROPIC,
        Operation.LIST_MODELS,
        re.compile(r"/v1/models(/[^/]+)?$"),
        methods=frozenset({"GET"}),
        hosts=ANTHROPIC_HOSTS,
        headers=("anthropic-version",),
    ),
    # Azure OpenAI (docs/providers.md#azure-openai): deployment paths name the model; the v1 paths are OpenAI's own, so
    # they are Azure's only on Azure hosts or with Azure's `api-key` header.
    RouteRule(
        Provider.AZURE,
        Operation.CHAT_COMPLETIONS,
        re.compile(r"/openai/deployments/(?P<model>[^/]+)/chat/completions$"),
        Streaming.BODY_FLAG,
        hosts=AZURE_HOSTS,
        distinct=True,
    ),
    RouteRule(
        Provider.AZURE,
        Operation.EMBEDDINGS,
        re.compile(r"/openai/deployments/(?P<model>[^/]+)/embeddings$"),
        hosts=AZURE_HOSTS,
        distinct=True,
    ),
    RouteRule(
        Provider.AZURE,
        Operation.CHAT_COMPLETIONS,
        re.compile(r"/openai/v1/chat/completions$"),
        Streaming.BODY_FLAG,
        hosts=AZURE_HOSTS,
        headers=("api-key",),
    ),
    RouteRule(
        Provider.AZURE,
        Operation.RESPONSES,
        re.compile(r"/openai(/v1)?/responses$"),
        Streaming.BODY_FLAG,
        hosts=AZURE_HOSTS,
        headers=("api-key",),
    ),
    RouteRule(
        Provider.AZURE,
        Operation.EMBEDDINGS,
        re.compile(r"/openai/v1/embeddings$"),
        hosts=AZURE_HOSTS,
        headers=("api-key",),
    ),
    # Ollama's native API (docs/providers.md#ollama); its OpenAI-compatible /v1 paths are OpenAI's rules above.
    RouteRule(
        Provider.OLLAMA,
        Operation.CHAT,
        re.compile(r"(^|/)api/chat$"),
        Streaming.BODY_FLAG_DEFAULT_TRUE,
        hosts=OLLAMA_HOSTS,
    ),
    RouteRule(
        Provider.OLLAMA,
        Operation.GENERATE,
        re.compile(r"(^|/)api/generate$"),
        Streaming.BODY_FLAG_DEFAULT_TRUE,
        hosts=OLLAMA_HOSTS,
    ),
    _bedrock(Operation.INVOKE, "invoke", Streaming.NEVER),
    _bedrock(Operation.INVOKE, "invoke-with-response-stream", Streaming.ALWAYS),
    _bedrock(Operation.CONVERSE, "converse", Streaming.NEVER),
    _bedrock(Operation.CONVERSE, "converse-stream", Streaming.ALWAYS),
    _bedrock(Operation.COUNT_TOKENS, "count-tokens", Streaming.NEVER),
    RouteRule(Provider.GEMINI, Operation.GENERATE_CONTENT, _gemini("generateContent"), hosts=GEMINI_HOSTS),
    RouteRule(
        Provider.GEMINI,
        Operation.GENERATE_CONTENT,
        _gemini("streamGenerateContent"),
        Streaming.ALWAYS,
        hosts=GEMINI_HOSTS,
    ),
    RouteRule(Provider.GEMINI, Operation.COUNT_TOKENS, _gemini("countTokens"), hosts=GEMINI_HOSTS),
    RouteRule(
        Provider.GEMINI,
        Operation.LIST_MODELS,
        re.compile(r"/v1[a-z0-9]*/models(/[^/:]+)?$"),
        methods=frozenset({"GET"}),
        hosts=GEMINI_HOSTS,
        host_only=True,
    ),
    RouteRule(
        Provider.GEMINI_CODE_ASSIST,
        Operation.GENERATE_CONTENT,
        _code_assist("generateContent"),
        hosts=CODE_ASSIST_HOSTS,
    ),
    RouteRule(
        Provider.GEMINI_CODE_ASSIST,
        Operation.GENERATE_CONTENT,
        _code_assist("streamGenerateContent"),
        Streaming.ALWAYS,
        hosts=CODE_ASSIST_HOSTS,
    ),
    RouteRule(
        Provider.GEMINI_CODE_ASSIST, Operation.COUNT_TOKENS, _code_assist("countTokens"), hosts=CODE_ASSIST_HOSTS
    ),
    # embeddings and rerank (docs/providers.md#embeddings-and-rerank-on-the-wire)
    RouteRule(
        Provider.GEMINI,
        Operation.EMBEDDINGS,
        _gemini("(embedContent|batchEmbedContents)"),
        hosts=GEMINI_HOSTS,
    ),
    RouteRule(Provider.OLLAMA, Operation.EMBEDDINGS, re.compile(r"(^|/)api/embed(dings)?$"), hosts=OLLAMA_HOSTS),
    # Cohere chat (v2, and v1 which its SDK's `Client.chat` still sends); the compatibility API at
    # /compatibility/v1/chat/completions is OpenAI's rule
    RouteRule(
        Provider.COHERE,
        Operation.CHAT,
        re.compile(r"/(?P<version>v[12])/chat$"),
        Streaming.BODY_FLAG,
        hosts=COHERE_HOSTS,
        host_only=True,  # `/v1/chat` is too generic (LM Studio's `/api/v1/chat`): elsewhere only with the SDK's header
        headers=("x-fern-sdk-name",),
    ),
    RouteRule(Provider.COHERE, Operation.EMBEDDINGS, re.compile(r"/(?P<version>v[12])/embed$"), hosts=COHERE_HOSTS),
    RouteRule(
        Provider.COHERE,
        Operation.LIST_MODELS,
        re.compile(r"/v1/models(/[^/]+)?$"),
        methods=frozenset({"GET"}),
        hosts=COHERE_HOSTS,
        host_only=True,
    ),
    # /v1/rerank is Voyage's too: on a foreign host it is Cohere's (first), whose SDK is also singled out
    RouteRule(
        Provider.COHERE,
        Operation.RERANK,
        re.compile(r"/v[12]/rerank$"),
        hosts=COHERE_HOSTS,
        headers=("x-fern-sdk-name",),
    ),
    # Voyage shares OpenAI's and Cohere's paths and its SDK sends no tell-tale header: its host decides
    RouteRule(
        Provider.VOYAGE, Operation.EMBEDDINGS, re.compile(r"/v1/embeddings$"), hosts=VOYAGE_HOSTS, host_only=True
    ),
    RouteRule(Provider.VOYAGE, Operation.RERANK, re.compile(r"/v1/rerank$"), hosts=VOYAGE_HOSTS, host_only=True),
]
