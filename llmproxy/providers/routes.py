"""Provider detection: ``(scheme, host, path, headers) → Route``.

A table of rules, one per (provider, operation). A rule matches by path suffix, so custom base URLs and
gateways (``https://gw.example/anthropic/v1/messages``) are recognised on any host; the rule's own hosts,
and headers only that provider sends, break ties where two APIs share a path (``/v1/models``). A rule
marked `distinct` has a path no other API uses (Azure's ``/openai/deployments/{d}/…``), so it beats the
generic rules on any host. A rule's path pattern may capture ``(?P<model>…)``: APIs that name the model
in the URL (Azure, Gemini, Bedrock) fill `Route.model` from it, URL-decoded. A WebSocket upgrade (a GET with
``Upgrade: websocket``) matches only rules marked `websocket`: the APIs llmproxy can read message by message.
Later providers extend `RULES`.
"""

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any
from urllib.parse import unquote

from llmproxy.model import Operation, Provider, Route


class Streaming(StrEnum):
    """Where a rule learns whether the response streams."""

    NEVER = "never"
    ALWAYS = "always"
    BODY_FLAG = "body_flag"  # `"stream": true` in the JSON request body
    BODY_FLAG_DEFAULT_TRUE = "body_flag_default_true"  # streams unless the body says `"stream": false` (Ollama)


@dataclass(frozen=True, slots=True)
class RouteRule:
    provider: Provider
    operation: Operation
    path: re.Pattern[str]
    streaming: Streaming = Streaming.NEVER
    methods: frozenset[str] = frozenset({"POST"})
    hosts: tuple[str, ...] = ()
    host_only: bool = False  # the path is too generic to trust on other hosts
    headers: tuple[str, ...] = field(default=())  # headers that single this provider out on other hosts
    distinct: bool = False  # the path alone names this provider: it beats generic rules on any host
    host_pattern: re.Pattern[str] | None = None  # for hosts named by region or endpoint (Bedrock)
    websocket: bool = False  # also spoken over a WebSocket at the same path (llmproxy.providers.websocket)

    def serves(self, host: str) -> bool:
        if self.host_pattern is not None and self.host_pattern.search(host):
            return True
        return any(host == h or host.endswith("." + h) for h in self.hosts)


ANTHROPIC_HOSTS = ("api.anthropic.com",)
OPENAI_HOSTS = ("api.openai.com",)
CODEX_HOSTS = ("chatgpt.com",)
AZURE_HOSTS = ("openai.azure.com", "cognitiveservices.azure.com", "services.ai.azure.com")
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
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
        re.compile(r"(/v1|/backend-api/codex)/responses$"),
        Streaming.BODY_FLAG,
        hosts=OPENAI_HOSTS + CODEX_HOSTS,
        websocket=True,  # Codex CLI's default transport (reference/codex-websocket.md)
    ),
    RouteRule(Provider.OPENAI, Operation.EMBEDDINGS, re.compile(r"/v1/embeddings$"), hosts=OPENAI_HOSTS),
    RouteRule(
        Provider.OPENAI,
        Operation.LIST_MODELS,
        re.compile(r"/v1/models(/[^/]+)?$"),
        methods=frozenset({"GET"}),
        hosts=OPENAI_HOSTS,
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
    # Azure OpenAI (wire-formats.md §7): deployment paths name the model; the v1 paths are OpenAI's own, so
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
    # Ollama's native API (§8); its OpenAI-compatible /v1 paths are OpenAI's rules above.
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
    # embeddings and rerank (wire-formats.md §9)
    RouteRule(
        Provider.GEMINI,
        Operation.EMBEDDINGS,
        _gemini("(embedContent|batchEmbedContents)"),
        hosts=GEMINI_HOSTS,
    ),
    RouteRule(Provider.OLLAMA, Operation.EMBEDDINGS, re.compile(r"(^|/)api/embed(dings)?$"), hosts=OLLAMA_HOSTS),
    RouteRule(Provider.COHERE, Operation.EMBEDDINGS, re.compile(r"/(?P<version>v[12])/embed$"), hosts=COHERE_HOSTS),
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


def detect(
    host: str,
    path: str,
    headers: Mapping[str, str] | None = None,
    *,
    method: str = "POST",
    scheme: str = "https",
) -> Route | None:
    """The API a request speaks, or None for traffic that is not a known LLM API.

    `path` may carry a query string; colons may be percent-encoded (``%3A``). Among rules whose path
    matches, one that serves `host` wins, then one that is `distinct` or whose tell-tale headers are present,
    then the first in `RULES`. `scheme` does not change the answer today (local servers speak plain http); it
    is part of the signature so rules can use it. A rule whose path names the model (a `model` group) sets
    `Route.model`, URL-decoded. A WebSocket upgrade gets a `websocket` route, which always streams.
    """
    del scheme
    host = host.lower().rstrip(".")
    bare_path = _ENCODED_COLON.sub(":", path.split("?", 1)[0]).rstrip("/") or "/"
    present = frozenset(name.lower() for name in headers or () if name.lower() in _TELLTALE_HEADERS)
    return _detect(host, bare_path, method.upper(), present, is_websocket_upgrade(method, headers))


def is_websocket_upgrade(method: str, headers: Mapping[str, str] | None) -> bool:
    """Whether a request asks to become a WebSocket (RFC 6455: a GET with ``Upgrade: websocket``)."""
    if method.upper() != "GET" or not headers:
        return False
    return any(name.lower() == "upgrade" and value.strip().lower() == "websocket" for name, value in headers.items())


@functools.lru_cache(maxsize=4096)
def _detect(host: str, bare_path: str, method: str, header_names: frozenset[str], websocket: bool) -> Route | None:
    """Detection proper, cached: clients send the same few host, path and header combinations again and
    again, and walking the rules is the costliest step of handling a mocked or replayed request."""
    best: tuple[int, RouteRule, re.Match[str]] | None = None
    for rule in RULES:
        allowed = rule.websocket if websocket else method in rule.methods
        match = rule.path.search(bare_path) if allowed else None
        if match is None:
            continue
        on_host = rule.serves(host)
        if rule.host_only and not on_host:
            continue
        score = 2 if on_host else 1 if rule.distinct or header_names.intersection(rule.headers) else 0
        if best is None or score > best[0]:
            best = (score, rule, match)
    if best is None:
        return None
    _, rule, match = best
    streaming = True if websocket else {Streaming.NEVER: False, Streaming.ALWAYS: True}.get(rule.streaming)
    groups = match.groupdict()
    model = unquote(groups["model"]) if groups.get("model") else None
    return Route(rule.provider, rule.operation, streaming, model, groups.get("version"), websocket)


_ENCODED_COLON = re.compile("%3a", re.IGNORECASE)


def with_body(route: Route, body: Mapping[str, Any] | None) -> Route:
    """Settle `streaming` from the parsed request body, for routes whose body decides: its boolean
    `stream`, else the API's default (off, except for Ollama's native API)."""
    if route.streaming is not None:
        return route
    flag = body.get("stream") if body is not None else None
    return _settled(route, flag if isinstance(flag, bool) else None)


@functools.lru_cache(maxsize=1024)
def _settled(route: Route, flag: bool | None) -> Route:
    """The route with `streaming` decided (few distinct routes: building one per request cost more than
    deciding)."""
    default = (route.provider, route.operation) in _STREAMING_BY_DEFAULT
    return replace(route, streaming=flag if flag is not None else default)


def is_provider_host(host: str) -> bool:
    """Whether `host` is one of the known LLM API hosts, whatever the path. Loopback is not: a local Ollama
    lists it to win ties, but everything else a developer runs locally lives there too."""
    host = host.lower().rstrip(".").strip("[]")
    return host not in LOOPBACK_HOSTS and any(rule.serves(host) for rule in RULES)


_STREAMING_BY_DEFAULT = frozenset(
    (rule.provider, rule.operation) for rule in RULES if rule.streaming is Streaming.BODY_FLAG_DEFAULT_TRUE
)
"""APIs that stream unless the body says `"stream": false` (Ollama's native API)."""

_TELLTALE_HEADERS = frozenset(name for rule in RULES for name in rule.headers)
"""The only headers detection looks at."""
