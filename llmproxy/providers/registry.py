"""Finding the codec for a route. Codecs are registered here by name, so files and the CLI can name them."""

from datetime import datetime

from llmproxy.model import Operation, Provider, Route
from llmproxy.providers import (
    anthropic,
    azure,
    bedrock,
    cohere_chat,
    gemini,
    gemini_code_assist,
    ollama,
    openai_chat,
    openai_responses,
)
from llmproxy.providers.anthropic import MESSAGES as ANTHROPIC_MESSAGES
from llmproxy.providers.base import ChatCodec, EncodeError, EncodeRateLimits, RateLimits
from llmproxy.providers.bedrock import CONVERSE as BEDROCK_CONVERSE
from llmproxy.providers.bedrock import INVOKE_ANTHROPIC as BEDROCK_INVOKE_ANTHROPIC
from llmproxy.providers.bedrock import invoke_codec as bedrock_invoke_codec
from llmproxy.providers.cohere_chat import CHAT as COHERE_CHAT
from llmproxy.providers.cohere_chat import CHAT_V1 as COHERE_CHAT_V1
from llmproxy.providers.embeddings import (
    BEDROCK_COHERE_EMBEDDINGS,
    BEDROCK_TITAN_EMBEDDINGS,
    COHERE_EMBEDDINGS,
    COHERE_EMBEDDINGS_V1,
    GEMINI_EMBEDDINGS,
    OLLAMA_EMBEDDINGS,
    OPENAI_EMBEDDINGS,
    VOYAGE_EMBEDDINGS,
    bedrock_embedding_codec,
)
from llmproxy.providers.facts import ProviderFacts
from llmproxy.providers.gemini import GENERATE as GEMINI_GENERATE
from llmproxy.providers.gemini_code_assist import CODE_ASSIST as GEMINI_CODE_ASSIST
from llmproxy.providers.ollama import CHAT as OLLAMA_CHAT
from llmproxy.providers.ollama import GENERATE as OLLAMA_GENERATE
from llmproxy.providers.openai_chat import CHAT as OPENAI_CHAT
from llmproxy.providers.openai_responses import RESPONSES as OPENAI_RESPONSES
from llmproxy.providers.openai_responses.websocket import RESPONSES_OVER_WEBSOCKET, RESPONSES_WEBSOCKET
from llmproxy.providers.rerank import COHERE_RERANK, VOYAGE_RERANK
from llmproxy.providers.vectors import EmbeddingCodec, RerankCodec
from llmproxy.providers.websocket import WebSocketCodec

CHAT_CODECS: dict[str, ChatCodec] = {
    "anthropic-messages": ANTHROPIC_MESSAGES,
    "openai-chat": OPENAI_CHAT,
    "openai-responses": OPENAI_RESPONSES,
    "ollama-chat": OLLAMA_CHAT,
    "ollama-generate": OLLAMA_GENERATE,
    "bedrock-converse": BEDROCK_CONVERSE,
    "bedrock-invoke-anthropic": BEDROCK_INVOKE_ANTHROPIC,
    "gemini-generate": GEMINI_GENERATE,
    "gemini-code-assist": GEMINI_CODE_ASSIST,
    "cohere-chat": COHERE_CHAT,
    "cohere-chat-v1": COHERE_CHAT_V1,
}

_BY_ROUTE: dict[tuple[Provider, Operation], ChatCodec] = {
    (codec.provider, codec.operation): codec
    for codec in (*CHAT_CODECS.values(), azure.CHAT, azure.RESPONSES)
    if codec is not COHERE_CHAT_V1
}
"""Azure's codecs are OpenAI's "openai-chat" and "openai-responses" with Azure's error bodies, so they have
no names of their own. Cohere's chat codec follows the URL's version."""


def chat_codec(route: Route) -> ChatCodec | None:
    """The chat codec that reads and writes this route's bodies, if it is a chat operation (over a WebSocket:
    the requests read whole, and a stream's events as messages)."""
    if route.websocket:
        return _OVER_WEBSOCKET.get((route.provider, route.operation))
    if (route.provider, route.operation) == (Provider.BEDROCK, Operation.INVOKE):
        return bedrock_invoke_codec(route.model)  # an invoke body is the model family's own format
    if (route.provider, route.operation, route.version) == (Provider.COHERE, Operation.CHAT, "v1"):
        return COHERE_CHAT_V1
    return _BY_ROUTE.get((route.provider, route.operation))


WEBSOCKET_CODECS: dict[tuple[Provider, Operation], WebSocketCodec] = {
    (codec.provider, codec.operation): codec for codec in (RESPONSES_WEBSOCKET,)
}
_OVER_WEBSOCKET: dict[tuple[Provider, Operation], ChatCodec] = {
    (codec.provider, codec.operation): codec for codec in (RESPONSES_OVER_WEBSOCKET,)
}


def websocket_codec(route: Route | None) -> WebSocketCodec | None:
    """How a WebSocket route's API speaks in messages (llmproxy.providers.websocket), if llmproxy knows it."""
    if route is None or not route.websocket:
        return None
    return WEBSOCKET_CODECS.get((route.provider, route.operation))


EMBEDDING_CODECS: dict[str, EmbeddingCodec] = {
    "openai-embeddings": OPENAI_EMBEDDINGS,
    "gemini-embeddings": GEMINI_EMBEDDINGS,
    "ollama-embeddings": OLLAMA_EMBEDDINGS,
    "bedrock-titan-embeddings": BEDROCK_TITAN_EMBEDDINGS,
    "bedrock-cohere-embeddings": BEDROCK_COHERE_EMBEDDINGS,
    "cohere-embed": COHERE_EMBEDDINGS,
    "cohere-embed-v1": COHERE_EMBEDDINGS_V1,
    "voyage-embeddings": VOYAGE_EMBEDDINGS,
}
RERANK_CODECS: dict[str, RerankCodec] = {"cohere-rerank": COHERE_RERANK, "voyage-rerank": VOYAGE_RERANK}

_EMBEDDINGS_BY_ROUTE: dict[tuple[Provider, Operation], EmbeddingCodec] = {
    (codec.provider, codec.operation): codec
    for codec in EMBEDDING_CODECS.values()
    if codec.operation is Operation.EMBEDDINGS and codec is not COHERE_EMBEDDINGS_V1
}  # Bedrock's bodies depend on the model (bedrock_embedding_codec), Cohere's on the URL's version
_EMBEDDINGS_BY_ROUTE[Provider.AZURE, Operation.EMBEDDINGS] = OPENAI_EMBEDDINGS
_RERANK_BY_ROUTE = {(codec.provider, codec.operation): codec for codec in RERANK_CODECS.values()}


def embedding_codec(route: Route) -> EmbeddingCodec | None:
    """The embedding codec for this route: by operation, for Bedrock `InvokeModel` by the model id, for
    Cohere by the URL's version."""
    if (route.provider, route.operation) == (Provider.BEDROCK, Operation.INVOKE):
        return bedrock_embedding_codec(route.model) if route.model else None
    if (route.provider, route.operation, route.version) == (Provider.COHERE, Operation.EMBEDDINGS, "v1"):
        return COHERE_EMBEDDINGS_V1
    return _EMBEDDINGS_BY_ROUTE.get((route.provider, route.operation))


def rerank_codec(route: Route) -> RerankCodec | None:
    """The rerank codec for this route, if it is a rerank operation."""
    return _RERANK_BY_ROUTE.get((route.provider, route.operation))


_ALL_CODECS: list[ChatCodec | EmbeddingCodec | RerankCodec] = [
    *RERANK_CODECS.values(),
    *EMBEDDING_CODECS.values(),
    *_BY_ROUTE.values(),  # a provider's chat codec last, so it wins: its errors are the ones its clients parse
]
_ERRORS_BY_PROVIDER: dict[Provider, EncodeError] = {codec.provider: codec.encode_error for codec in _ALL_CODECS}


def error_encoder(route: Route) -> EncodeError:
    """How errors are worded on this route: its own codec's way, else its provider's — a Bedrock model with no
    codec here, or an Anthropic call that is not a chat (`/v1/models`), still gets its provider's error shape,
    which its SDK reads."""
    codec = chat_codec(route) or embedding_codec(route) or rerank_codec(route)
    return codec.encode_error if codec is not None else _ERRORS_BY_PROVIDER[route.provider]


_RATE_LIMITS_BY_PROVIDER: dict[Provider, EncodeRateLimits] = {
    codec.provider: codec.rate_limit_headers for codec in _BY_ROUTE.values()
}


def rate_limit_encoder(route: Route) -> EncodeRateLimits:
    """How this route's provider advertises rate-limit state in headers (none for one that sends none)."""
    codec = chat_codec(route)
    return codec.rate_limit_headers if codec is not None else _RATE_LIMITS_BY_PROVIDER.get(route.provider, _none)


def _none(limits: RateLimits, now: datetime) -> dict[str, str]:
    """No rate-limit headers: a provider whose headers llmproxy does not know (Cohere, Voyage)."""
    del limits, now
    return {}


def named_codec(name: str) -> ChatCodec | EmbeddingCodec | RerankCodec | None:
    """A codec by the name files and the CLI use (`--route HOST=openai-chat`)."""
    return CHAT_CODECS.get(name) or EMBEDDING_CODECS.get(name) or RERANK_CODECS.get(name)


def codec_names() -> list[str]:
    return [*CHAT_CODECS, *EMBEDDING_CODECS, *RERANK_CODECS]


_DECLARED = (
    anthropic.FACTS,
    openai_chat.FACTS,
    openai_responses.FACTS,
    gemini.FACTS,
    gemini_code_assist.FACTS,
    azure.FACTS,
    bedrock.FACTS,
    ollama.FACTS,
    cohere_chat.FACTS,
)
"""Each provider package's facts (`llmproxy.providers.facts`); an API of a provider with two adds to its facts."""


def _merge(declared: tuple[ProviderFacts, ...]) -> dict[Provider | None, ProviderFacts]:
    merged: dict[Provider | None, ProviderFacts] = {}
    for one in declared:
        known = merged.get(one.provider)
        merged[one.provider] = known.merged(one) if known is not None else one
    return merged


_FACTS = _merge(_DECLARED)
_NOTHING = ProviderFacts(None)
_HISTORY_PATHS = tuple(dict.fromkeys(path for declared in _DECLARED for path in declared.history))


def facts(provider: Provider | str | None) -> ProviderFacts:
    """What llmproxy knows about this provider's API; nothing for one it does not know, or for traffic that is
    not an LLM API's."""
    try:
        known = Provider(provider) if provider is not None else None
    except ValueError:
        return _NOTHING
    return _FACTS.get(known, _NOTHING)


def history_paths() -> tuple[tuple[str, ...], ...]:
    """Where any API llmproxy knows carries its conversation history, each path once, in declaration order."""
    return _HISTORY_PATHS
