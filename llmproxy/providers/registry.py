"""Finding the codec for a route. Codecs are registered here by name, so files and the CLI can name them.

The tables below say where each codec lives (`module:NAME` under `llmproxy.providers`); a codec's modules are
imported the first time a route or a name asks for it, so a proxy that only ever sees one provider's traffic
never loads the other providers' codecs (they were a fifth of llmproxy's own start-up). The whole tables
(`CHAT_CODECS`, `EMBEDDING_CODECS`, `RERANK_CODECS`, `WEBSOCKET_CODECS`) load everything on first access.
"""

import functools
import importlib
from datetime import datetime
from typing import Any, NamedTuple

from llmproxy.model import Operation, Provider, Route
from llmproxy.providers.base import ChatCodec, EncodeError, EncodeRateLimits, RateLimits
from llmproxy.providers.facts import ProviderFacts
from llmproxy.providers.vectors import EmbeddingCodec, RerankCodec
from llmproxy.providers.websocket import WebSocketCodec

type Where = str  # "module:NAME" under llmproxy.providers

# loaded whole on first access (the module's __getattr__ at the end)
CHAT_CODECS: dict[str, ChatCodec]
EMBEDDING_CODECS: dict[str, EmbeddingCodec]
RERANK_CODECS: dict[str, RerankCodec]
WEBSOCKET_CODECS: dict[tuple[Provider, Operation], WebSocketCodec]

_CHAT: dict[str, tuple[Provider, Operation, Where]] = {
    "anthropic-messages": (Provider.ANTHROPIC, Operation.MESSAGES, "anthropic:MESSAGES"),
    "openai-chat": (Provider.OPENAI, Operation.CHAT_COMPLETIONS, "openai_chat:CHAT"),
    "openai-responses": (Provider.OPENAI, Operation.RESPONSES, "openai_responses:RESPONSES"),
    "ollama-chat": (Provider.OLLAMA, Operation.CHAT, "ollama:CHAT"),
    "ollama-generate": (Provider.OLLAMA, Operation.GENERATE, "ollama:GENERATE"),
    "bedrock-converse": (Provider.BEDROCK, Operation.CONVERSE, "bedrock:CONVERSE"),
    "bedrock-invoke-anthropic": (Provider.BEDROCK, Operation.INVOKE, "bedrock:INVOKE_ANTHROPIC"),
    "gemini-generate": (Provider.GEMINI, Operation.GENERATE_CONTENT, "gemini:GENERATE"),
    "gemini-code-assist": (Provider.GEMINI_CODE_ASSIST, Operation.GENERATE_CONTENT, "gemini_code_assist:CODE_ASSIST"),
    "cohere-chat": (Provider.COHERE, Operation.CHAT, "cohere_chat:CHAT"),
    "cohere-chat-v1": (Provider.COHERE, Operation.CHAT, "cohere_chat:CHAT_V1"),
}
_CHAT_BY_ROUTE: dict[tuple[Provider, Operation], Where] = {
    **{
        (provider, operation): where for name, (provider, operation, where) in _CHAT.items() if name != "cohere-chat-v1"
    },
    (Provider.AZURE, Operation.CHAT_COMPLETIONS): "azure:CHAT",
    (Provider.AZURE, Operation.RESPONSES): "azure:RESPONSES",
}
"""Azure's codecs are OpenAI's "openai-chat" and "openai-responses" with Azure's error bodies, so they have
no names of their own. Cohere's chat codec follows the URL's version."""

_WEBSOCKET: dict[tuple[Provider, Operation], Where] = {
    (Provider.OPENAI, Operation.RESPONSES): "openai_responses.websocket:RESPONSES_WEBSOCKET"
}
_OVER_WEBSOCKET: dict[tuple[Provider, Operation], Where] = {
    (Provider.OPENAI, Operation.RESPONSES): "openai_responses.websocket:RESPONSES_OVER_WEBSOCKET"
}

_EMBEDDINGS: dict[str, tuple[Provider, Operation, Where]] = {
    "openai-embeddings": (Provider.OPENAI, Operation.EMBEDDINGS, "embeddings:OPENAI_EMBEDDINGS"),
    "gemini-embeddings": (Provider.GEMINI, Operation.EMBEDDINGS, "embeddings:GEMINI_EMBEDDINGS"),
    "ollama-embeddings": (Provider.OLLAMA, Operation.EMBEDDINGS, "embeddings:OLLAMA_EMBEDDINGS"),
    "bedrock-titan-embeddings": (Provider.BEDROCK, Operation.INVOKE, "embeddings:BEDROCK_TITAN_EMBEDDINGS"),
    "bedrock-cohere-embeddings": (Provider.BEDROCK, Operation.INVOKE, "embeddings:BEDROCK_COHERE_EMBEDDINGS"),
    "cohere-embed": (Provider.COHERE, Operation.EMBEDDINGS, "embeddings:COHERE_EMBEDDINGS"),
    "cohere-embed-v1": (Provider.COHERE, Operation.EMBEDDINGS, "embeddings:COHERE_EMBEDDINGS_V1"),
    "voyage-embeddings": (Provider.VOYAGE, Operation.EMBEDDINGS, "embeddings:VOYAGE_EMBEDDINGS"),
}
_EMBEDDINGS_BY_ROUTE: dict[tuple[Provider, Operation], Where] = {
    **{
        (provider, operation): where
        for name, (provider, operation, where) in _EMBEDDINGS.items()
        if operation is Operation.EMBEDDINGS and name != "cohere-embed-v1"
    },
    (Provider.AZURE, Operation.EMBEDDINGS): "embeddings:OPENAI_EMBEDDINGS",
}  # Bedrock's bodies depend on the model (bedrock_embedding_codec), Cohere's on the URL's version

_RERANK: dict[str, tuple[Provider, Operation, Where]] = {
    "cohere-rerank": (Provider.COHERE, Operation.RERANK, "rerank:COHERE_RERANK"),
    "voyage-rerank": (Provider.VOYAGE, Operation.RERANK, "rerank:VOYAGE_RERANK"),
}
_RERANK_BY_ROUTE = {(provider, operation): where for provider, operation, where in _RERANK.values()}

_SPEAKS_FOR: dict[Provider, Where] = {
    Provider.ANTHROPIC: "anthropic:MESSAGES",
    Provider.OPENAI: "openai_responses:RESPONSES",
    Provider.OLLAMA: "ollama:GENERATE",
    Provider.BEDROCK: "bedrock:INVOKE_ANTHROPIC",
    Provider.GEMINI: "gemini:GENERATE",
    Provider.GEMINI_CODE_ASSIST: "gemini_code_assist:CODE_ASSIST",
    Provider.COHERE: "cohere_chat:CHAT",
    Provider.AZURE: "azure:RESPONSES",
    Provider.VOYAGE: "embeddings:VOYAGE_EMBEDDINGS",
}
"""The codec whose errors (and, a chat codec's, rate-limit headers) are its provider's: what a route of the
provider that no codec reads (a Bedrock model with none here, Anthropic's `/v1/models`) still gets, because
its SDK parses that shape."""


@functools.cache
def _load(where: Where) -> Any:
    module, name = where.split(":")
    return getattr(importlib.import_module(f"llmproxy.providers.{module}"), name)


def _loaded(where: Where | None) -> Any:
    return _load(where) if where is not None else None


def chat_codec(route: Route) -> ChatCodec | None:
    """The chat codec that reads and writes this route's bodies, if it is a chat operation (over a WebSocket:
    the requests read whole, and a stream's events as messages)."""
    key = (route.provider, route.operation)
    if route.websocket:
        codec: ChatCodec | None = _loaded(_OVER_WEBSOCKET.get(key))
        return codec
    if key == (Provider.BEDROCK, Operation.INVOKE):
        codec = _load("bedrock:invoke_codec")(route.model)  # an invoke body is the model family's own format
        return codec
    if (route.provider, route.operation, route.version) == (Provider.COHERE, Operation.CHAT, "v1"):
        codec = _load(_CHAT["cohere-chat-v1"][2])
        return codec
    codec = _loaded(_CHAT_BY_ROUTE.get(key))
    return codec


def websocket_codec(route: Route | None) -> WebSocketCodec | None:
    """How a WebSocket route's API speaks in messages (llmproxy.providers.websocket), if llmproxy knows it."""
    if route is None or not route.websocket:
        return None
    codec: WebSocketCodec | None = _loaded(_WEBSOCKET.get((route.provider, route.operation)))
    return codec


def embedding_codec(route: Route) -> EmbeddingCodec | None:
    """The embedding codec for this route: by operation, for Bedrock `InvokeModel` by the model id, for
    Cohere by the URL's version."""
    codec: EmbeddingCodec | None
    if (route.provider, route.operation) == (Provider.BEDROCK, Operation.INVOKE):
        codec = _load("embeddings:bedrock_embedding_codec")(route.model) if route.model else None
        return codec
    if (route.provider, route.operation, route.version) == (Provider.COHERE, Operation.EMBEDDINGS, "v1"):
        codec = _load(_EMBEDDINGS["cohere-embed-v1"][2])
        return codec
    codec = _loaded(_EMBEDDINGS_BY_ROUTE.get((route.provider, route.operation)))
    return codec


def rerank_codec(route: Route) -> RerankCodec | None:
    """The rerank codec for this route, if it is a rerank operation."""
    codec: RerankCodec | None = _loaded(_RERANK_BY_ROUTE.get((route.provider, route.operation)))
    return codec


def error_encoder(route: Route) -> EncodeError:
    """How errors are worded on this route: its own codec's way, else its provider's — a Bedrock model with no
    codec here, or an Anthropic call that is not a chat (`/v1/models`), still gets its provider's error shape,
    which its SDK reads."""
    codec = chat_codec(route) or embedding_codec(route) or rerank_codec(route) or _load(_SPEAKS_FOR[route.provider])
    encode: EncodeError = codec.encode_error
    return encode


def rate_limit_encoder(route: Route) -> EncodeRateLimits:
    """How this route's provider advertises rate-limit state in headers (none for one that sends none)."""
    codec = chat_codec(route) or _loaded(_SPEAKS_FOR.get(route.provider))
    return codec.rate_limit_headers if isinstance(codec, ChatCodec) else _none


def _none(limits: RateLimits, now: datetime) -> dict[str, str]:
    """No rate-limit headers: a provider whose headers llmproxy does not know (Cohere, Voyage)."""
    del limits, now
    return {}


def named_codec(name: str) -> ChatCodec | EmbeddingCodec | RerankCodec | None:
    """A codec by the name files and the CLI use (`--route HOST=openai-chat`)."""
    found = _CHAT.get(name) or _EMBEDDINGS.get(name) or _RERANK.get(name)
    codec: ChatCodec | EmbeddingCodec | RerankCodec | None = _load(found[2]) if found is not None else None
    return codec


def codec_names() -> list[str]:
    return [*_CHAT, *_EMBEDDINGS, *_RERANK]


class Filing(NamedTuple):
    """A codec where the tables file it as its provider's own: under `provider` and `operation` (None: as the
    codec that speaks for its provider, `error_encoder`'s last resort), by `name` if files and the CLI can
    name it."""

    provider: Provider
    operation: Operation | None
    name: str | None
    codec: Any


def filings() -> list[Filing]:
    """Every codec as the tables file it as its provider's own, each loaded: for checking that each is filed
    under its own provider and operation. (Azure's embeddings route is left out: its codec is OpenAI's.)"""
    named = [(name, entry) for table in (_CHAT, _EMBEDDINGS, _RERANK) for name, entry in table.items()]
    by_route = (_CHAT_BY_ROUTE, _OVER_WEBSOCKET, _WEBSOCKET, _RERANK_BY_ROUTE)
    return [
        *(Filing(provider, operation, name, _load(where)) for name, (provider, operation, where) in named),
        *(
            Filing(provider, operation, None, _load(where))
            for table in by_route
            for (provider, operation), where in table.items()
        ),
        *(Filing(provider, None, None, _load(where)) for provider, where in _SPEAKS_FOR.items()),
    ]


_DECLARED: tuple[tuple[Provider, str], ...] = (
    (Provider.ANTHROPIC, "anthropic"),
    (Provider.OPENAI, "openai_chat"),
    (Provider.OPENAI, "openai_responses"),
    (Provider.GEMINI, "gemini"),
    (Provider.GEMINI_CODE_ASSIST, "gemini_code_assist"),
    (Provider.AZURE, "azure"),
    (Provider.BEDROCK, "bedrock"),
    (Provider.OLLAMA, "ollama"),
    (Provider.COHERE, "cohere_chat"),
)
"""The provider packages that declare facts (`llmproxy.providers.facts`, each package's FACTS); an API of a
provider with two adds to its facts."""
_NOTHING = ProviderFacts(None)


@functools.cache
def _facts(provider: Provider) -> ProviderFacts:
    merged = _NOTHING
    for one in [_load(f"{module}:FACTS") for declared, module in _DECLARED if declared is provider]:
        merged = merged.merged(one) if merged is not _NOTHING else one
    return merged


def facts(provider: Provider | str | None) -> ProviderFacts:
    """What llmproxy knows about this provider's API; nothing for one it does not know, or for traffic that is
    not an LLM API's."""
    try:
        known = Provider(provider) if provider is not None else None
    except ValueError:
        return _NOTHING
    return _facts(known) if known is not None else _NOTHING


@functools.cache
def history_paths() -> tuple[tuple[str, ...], ...]:
    """Where any API llmproxy knows carries its conversation history, each path once, in declaration order."""
    declared = [_load(f"{module}:FACTS") for _, module in _DECLARED]
    return tuple(dict.fromkeys(path for one in declared for path in one.history))


def __getattr__(name: str) -> dict[Any, Any]:
    """The whole tables, every codec loaded: for tools and tests that go through them all."""
    tables: dict[str, dict[str, tuple[Provider, Operation, Where]] | dict[tuple[Provider, Operation], Where]] = {
        "CHAT_CODECS": _CHAT,
        "EMBEDDING_CODECS": _EMBEDDINGS,
        "RERANK_CODECS": _RERANK,
        "WEBSOCKET_CODECS": _WEBSOCKET,
    }
    if name not in tables:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return {key: _load(entry if isinstance(entry, str) else entry[2]) for key, entry in tables[name].items()}
