"""Provider detection: ``(scheme, host, path, headers) → Route``.

A table of rules, one per (provider, operation). A rule matches by path suffix, so custom base URLs and
gateways (``https://gw.example/anthropic/v1/messages``) are recognised on any host; the rule's own hosts,
and headers only that provider sends, break ties where two APIs share a path (``/v1/models``). A rule's
path pattern may capture ``(?P<model>…)``: APIs that name the model in the URL (Gemini) fill `Route.model`
from it. Later providers extend `RULES`.
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
# Vertex AI's regional hosts (`us-central1-aiplatform.googleapis.com`) are not subdomains of the global
# one; the Gemini paths are specific enough to be recognised on them (and any host) by path alone.
GEMINI_HOSTS = ("generativelanguage.googleapis.com", "aiplatform.googleapis.com")
CODE_ASSIST_HOSTS = ("cloudcode-pa.googleapis.com",)
# `/v1beta/models/{m}`, Vertex `/v1/projects/{p}/locations/{l}/publishers/google/models/{m}`, and
# Vertex express mode `/v1/publishers/google/models/{m}`.
_GEMINI_MODEL = r"/v1[a-z0-9]*/(projects/[^/]+/locations/[^/]+/)?(publishers/[^/]+/)?models/(?P<model>[^/:]+)"


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
    matches, one that serves `host` wins, then one whose tell-tale headers are present, then the first in
    `RULES`. `scheme` does not change the answer today (local servers speak plain http); it is part of the
    signature so rules can use it.
    """
    del scheme
    host = host.lower().rstrip(".")
    bare_path = _ENCODED_COLON.sub(":", path.split("?", 1)[0]).rstrip("/") or "/"
    header_names = {name.lower() for name in headers} if headers else set()
    best: tuple[int, RouteRule, re.Match[str]] | None = None
    for rule in RULES:
        match = rule.path.search(bare_path) if method.upper() in rule.methods else None
        if match is None:
            continue
        on_host = rule.serves(host)
        if rule.host_only and not on_host:
            continue
        score = 2 if on_host else 1 if header_names.intersection(rule.headers) else 0
        if best is None or score > best[0]:
            best = (score, rule, match)
    if best is None:
        return None
    _, rule, match = best
    streaming = {Streaming.NEVER: False, Streaming.ALWAYS: True, Streaming.BODY_FLAG: None}[rule.streaming]
    model = match.groupdict().get("model")
    return Route(rule.provider, rule.operation, streaming, unquote(model) if model else None)


_ENCODED_COLON = re.compile("%3a", re.IGNORECASE)


def with_body(route: Route, body: Mapping[str, Any] | None) -> Route:
    """Settle `streaming` from the parsed request body, for routes whose body decides."""
    if route.streaming is not None:
        return route
    return replace(route, streaming=body is not None and body.get("stream") is True)
