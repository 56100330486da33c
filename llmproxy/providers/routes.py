"""Provider detection: ``(scheme, host, path, headers) → Route``.

A table of rules, one per (provider, operation). A rule matches by path suffix, so custom base URLs and
gateways (``https://gw.example/anthropic/v1/messages``) are recognised on any host; the rule's own hosts,
and headers only that provider sends, break ties where two APIs share a path (``/v1/models``). Later
providers extend `RULES`.
"""

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

    def serves(self, host: str) -> bool:
        return any(host == h or host.endswith("." + h) for h in self.hosts)


ANTHROPIC_HOSTS = ("api.anthropic.com",)
OPENAI_HOSTS = ("api.openai.com",)
CODEX_HOSTS = ("chatgpt.com",)
GEMINI_HOSTS = ("generativelanguage.googleapis.com",)
AZURE_HOSTS = ("openai.azure.com", "cognitiveservices.azure.com", "services.ai.azure.com")
OLLAMA_HOSTS = ("ollama.com",)
COHERE_HOSTS = ("api.cohere.com", "api.cohere.ai")
VOYAGE_HOSTS = ("api.voyageai.com", "ai.mongodb.com")  # ai.mongodb.com: Voyage keys starting `al-`

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
    # embeddings and rerank (wire-formats.md §9); `model` and `version` groups fill the Route's fields
    RouteRule(
        Provider.GEMINI,
        Operation.EMBEDDINGS,
        re.compile(r"/v1(beta)?/models/(?P<model>[^/:]+):(embedContent|batchEmbedContents)$"),
        hosts=GEMINI_HOSTS,
    ),
    RouteRule(Provider.OLLAMA, Operation.EMBEDDINGS, re.compile(r"/api/embed(dings)?$"), hosts=OLLAMA_HOSTS),
    RouteRule(
        Provider.AZURE,
        Operation.EMBEDDINGS,
        re.compile(r"/openai/deployments/(?P<model>[^/]+)/embeddings$"),
        hosts=AZURE_HOSTS,
    ),
    RouteRule(
        Provider.AZURE, Operation.EMBEDDINGS, re.compile(r"/openai/v1/embeddings$"), hosts=AZURE_HOSTS, host_only=True
    ),
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

    `path` may carry a query string. Among rules whose path matches, one that serves `host` wins, then one
    whose tell-tale headers are present, then the first in `RULES`. `scheme` does not change the answer
    today (local servers speak plain http); it is part of the signature so rules can use it.
    """
    del scheme
    host = host.lower().rstrip(".")
    bare_path = path.split("?", 1)[0].rstrip("/") or "/"
    header_names = {name.lower() for name in headers} if headers else set()
    best: tuple[int, RouteRule] | None = None
    for rule in RULES:
        if method.upper() not in rule.methods or not rule.path.search(bare_path):
            continue
        on_host = rule.serves(host)
        if rule.host_only and not on_host:
            continue
        score = 2 if on_host else 1 if header_names.intersection(rule.headers) else 0
        if best is None or score > best[0]:
            best = (score, rule)
    if best is None:
        return None
    rule = best[1]
    streaming = {Streaming.NEVER: False, Streaming.ALWAYS: True, Streaming.BODY_FLAG: None}[rule.streaming]
    groups = match.groupdict() if (match := rule.path.search(bare_path)) else {}
    model = groups.get("model")
    return Route(rule.provider, rule.operation, streaming, unquote(model) if model else None, groups.get("version"))


def with_body(route: Route, body: Mapping[str, Any] | None) -> Route:
    """Settle `streaming` from the parsed request body, for routes whose body decides."""
    if route.streaming is not None:
        return route
    return replace(route, streaming=body is not None and body.get("stream") is True)
