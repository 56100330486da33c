"""Embeddings and rerank routes: detection by host and path (model and version from the URL), and the codec
each route finds."""

import pytest

from llmproxy.model import Operation, Provider, Route
from llmproxy.providers.embeddings import (
    BEDROCK_COHERE_EMBEDDINGS,
    BEDROCK_TITAN_EMBEDDINGS,
    COHERE_EMBEDDINGS,
    COHERE_EMBEDDINGS_V1,
    GEMINI_EMBEDDINGS,
    OLLAMA_EMBEDDINGS,
    OPENAI_EMBEDDINGS,
    VOYAGE_EMBEDDINGS,
)
from llmproxy.providers.registry import chat_codec, embedding_codec, rerank_codec
from llmproxy.providers.rerank import COHERE_RERANK, VOYAGE_RERANK
from llmproxy.providers.routes import detect

EMB, RERANK = Operation.EMBEDDINGS, Operation.RERANK


@pytest.mark.parametrize(
    ("host", "path", "route", "codec"),
    [
        ("api.openai.com", "/v1/embeddings", Route(Provider.OPENAI, EMB, False), OPENAI_EMBEDDINGS),
        # OpenAI's path stays OpenAI's on a foreign host, and is Voyage's on Voyage's hosts
        ("gw.example.com", "/v1/embeddings", Route(Provider.OPENAI, EMB, False), OPENAI_EMBEDDINGS),
        ("api.voyageai.com", "/v1/embeddings", Route(Provider.VOYAGE, EMB, False), VOYAGE_EMBEDDINGS),
        ("ai.mongodb.com", "/v1/embeddings", Route(Provider.VOYAGE, EMB, False), VOYAGE_EMBEDDINGS),
        (
            "generativelanguage.googleapis.com",
            "/v1beta/models/gemini-embedding-001:batchEmbedContents",
            Route(Provider.GEMINI, EMB, False, "gemini-embedding-001"),
            GEMINI_EMBEDDINGS,
        ),
        (
            "127.0.0.1",
            "/v1/models/text-embedding-004:embedContent?key=k",
            Route(Provider.GEMINI, EMB, False, "text-embedding-004"),
            GEMINI_EMBEDDINGS,
        ),
        ("localhost", "/api/embed", Route(Provider.OLLAMA, EMB, False), OLLAMA_EMBEDDINGS),
        ("ollama.com", "/api/embeddings", Route(Provider.OLLAMA, EMB, False), OLLAMA_EMBEDDINGS),
        (
            "myres.openai.azure.com",
            "/openai/deployments/my%20embedder/embeddings?api-version=2024-10-21",
            Route(Provider.AZURE, EMB, False, "my embedder"),
            OPENAI_EMBEDDINGS,
        ),
        ("myres.openai.azure.com", "/openai/v1/embeddings", Route(Provider.AZURE, EMB, False), OPENAI_EMBEDDINGS),
        ("proxy.internal", "/openai/v1/embeddings", Route(Provider.OPENAI, EMB, False), OPENAI_EMBEDDINGS),
        ("api.cohere.com", "/v2/embed", Route(Provider.COHERE, EMB, False, version="v2"), COHERE_EMBEDDINGS),
        ("api.cohere.ai", "/v1/embed", Route(Provider.COHERE, EMB, False, version="v1"), COHERE_EMBEDDINGS_V1),
        ("127.0.0.1", "/v1/embed", Route(Provider.COHERE, EMB, False, version="v1"), COHERE_EMBEDDINGS_V1),
    ],
)
def test_embedding_routes(host: str, path: str, route: Route, codec: object) -> None:
    assert detect(host, path) == route
    assert embedding_codec(route) is codec
    assert chat_codec(route) is None
    assert rerank_codec(route) is None


@pytest.mark.parametrize(
    ("host", "path", "headers", "provider", "codec"),
    [
        ("api.cohere.com", "/v2/rerank", {}, Provider.COHERE, COHERE_RERANK),
        ("api.cohere.ai", "/v1/rerank", {}, Provider.COHERE, COHERE_RERANK),
        ("api.voyageai.com", "/v1/rerank", {}, Provider.VOYAGE, VOYAGE_RERANK),
        # on a foreign host /v1/rerank is Cohere's, first in the table and singled out by its SDK's header
        ("gw.example.com", "/v1/rerank", {}, Provider.COHERE, COHERE_RERANK),
        ("gw.example.com", "/v1/rerank", {"X-Fern-SDK-Name": "cohere"}, Provider.COHERE, COHERE_RERANK),
    ],
)
def test_rerank_routes(host: str, path: str, headers: dict[str, str], provider: Provider, codec: object) -> None:
    route = detect(host, path, headers)
    assert route == Route(provider, RERANK, False)
    assert rerank_codec(route) is codec
    assert embedding_codec(route) is None


@pytest.mark.parametrize(
    ("model", "codec"),
    [
        ("amazon.titan-embed-text-v1", BEDROCK_TITAN_EMBEDDINGS),
        ("amazon.titan-embed-text-v2:0", BEDROCK_TITAN_EMBEDDINGS),
        ("amazon.titan-embed-image-v1", BEDROCK_TITAN_EMBEDDINGS),
        ("cohere.embed-english-v3", BEDROCK_COHERE_EMBEDDINGS),
        ("us.cohere.embed-v4:0", BEDROCK_COHERE_EMBEDDINGS),
        ("arn:aws:bedrock:us-east-1::foundation-model/cohere.embed-multilingual-v3", BEDROCK_COHERE_EMBEDDINGS),
        ("anthropic.claude-sonnet-4-5-v1:0", None),
        (None, None),
    ],
)
def test_bedrock_invoke_finds_the_embedding_body_by_model(model: str | None, codec: object) -> None:
    assert embedding_codec(Route(Provider.BEDROCK, Operation.INVOKE, False, model)) is codec


@pytest.mark.parametrize(
    ("host", "path", "method"),
    [
        ("example.com", "/v1/models/x:generateContent", "POST"),  # not an embedding method
        ("example.com", "/api/embedx", "POST"),
        ("api.voyageai.com", "/v1/embeddings", "GET"),
    ],
)
def test_not_an_embedding_route(host: str, path: str, method: str) -> None:
    route = detect(host, path, method=method)
    assert route is None or route.operation is not EMB
