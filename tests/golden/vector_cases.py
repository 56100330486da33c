"""Embedding and rerank golden cases: a request body as the SDKs send it, what it decodes to, and the result
to answer with. Golden files hold the answers: tests/golden/<codec>/<case>.json (scripts/regen_golden.py)."""

from dataclasses import dataclass
from typing import Any

from llmproxy.model import (
    EmbeddingRequest,
    EmbeddingResult,
    RerankItem,
    RerankRequest,
    RerankResult,
    Usage,
)


@dataclass(frozen=True)
class EmbeddingCase:
    codec: str  # a name in registry.EMBEDDING_CODECS
    request: dict[str, Any]
    decoded: EmbeddingRequest
    result: EmbeddingResult


@dataclass(frozen=True)
class RerankCase:
    codec: str  # a name in registry.RERANK_CODECS
    request: dict[str, Any]
    decoded: RerankRequest
    result: RerankResult


TWO = ((0.25, -0.5, 0.125), (1.0, 0.0, -0.75))  # float32 values: every wire carries them exactly
INEXACT = ((0.1, -0.2, 0.3),)  # not float32 values: base64 rounds them
USAGE = Usage(input_tokens=7)
IMAGE = "data:image/png;base64,iVBORw0KGgo="

EMBEDDING_CASES: dict[str, EmbeddingCase] = {
    "floats": EmbeddingCase(
        "openai-embeddings",
        {"model": "text-embedding-3-small", "input": ["hello", "world"], "encoding_format": "float"},
        EmbeddingRequest("text-embedding-3-small", ("hello", "world"), encodings=("float",)),
        EmbeddingResult(TWO, "text-embedding-3-small", USAGE),
    ),
    "base64_tokens": EmbeddingCase(
        "openai-embeddings",
        {"model": "text-embedding-3-large", "input": [[1, 2], [3]], "dimensions": 3, "encoding_format": "base64"},
        EmbeddingRequest("text-embedding-3-large", ("tokens:[1, 2]", "tokens:[3]"), 3, ("base64",), non_text=(0, 1)),
        EmbeddingResult(INEXACT * 2, "text-embedding-3-large", USAGE),
    ),
    "batch": EmbeddingCase(
        "gemini-embeddings",
        {
            "requests": [
                {
                    "model": "models/gemini-embedding-001",
                    "content": {"parts": [{"text": "a"}], "role": "user"},
                    "taskType": "RETRIEVAL_DOCUMENT",
                    "outputDimensionality": 3,
                },
                {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "b"}, {"text": "c"}]}},
            ]
        },
        EmbeddingRequest("gemini-embedding-001", ("a", "b\nc"), 3, input_type="RETRIEVAL_DOCUMENT"),
        EmbeddingResult(TWO, usage=USAGE),
    ),
    "single_snake_case": EmbeddingCase(
        "gemini-embeddings",
        {
            "content": {"parts": [{"text": "hi"}, {"inline_data": {"mime_type": "image/png", "data": "iVBO"}}]},
            "task_type": "SEMANTIC_SIMILARITY",
            "output_dimensionality": 3,
        },
        EmbeddingRequest(
            None, ("hi\npart:8a8271132aa2ebe5",), 3, input_type="SEMANTIC_SIMILARITY", non_text=(0,), single=True
        ),
        EmbeddingResult(TWO[:1], "gemini-embedding-001", USAGE),
    ),
    "embed": EmbeddingCase(
        "ollama-embeddings",
        {"model": "nomic-embed-text", "input": ["a", "b"], "dimensions": 3, "truncate": True},
        EmbeddingRequest("nomic-embed-text", ("a", "b"), 3),
        EmbeddingResult(TWO, "nomic-embed-text", USAGE),
    ),
    "legacy": EmbeddingCase(
        "ollama-embeddings",
        {"model": "nomic-embed-text", "prompt": "hello", "options": {"temperature": 0}},
        EmbeddingRequest("nomic-embed-text", ("hello",), single=True),
        EmbeddingResult(TWO[:1], "nomic-embed-text", USAGE),
    ),
    "titan_v2": EmbeddingCase(
        "bedrock-titan-embeddings",
        {"inputText": "hello", "dimensions": 3, "normalize": True, "embeddingTypes": ["float"]},
        EmbeddingRequest(None, ("hello",), 3, ("float",), single=True),
        EmbeddingResult(TWO[:1], usage=USAGE),
    ),
    "bedrock_cohere": EmbeddingCase(
        "bedrock-cohere-embeddings",
        {"texts": ["a", "b"], "input_type": "search_document", "truncate": "END"},
        EmbeddingRequest(None, ("a", "b"), input_type="search_document"),
        EmbeddingResult(TWO, id="emb-bedrock-1"),
    ),
    "v2_by_type": EmbeddingCase(
        "cohere-embed",
        {
            "model": "embed-v4.0",
            "texts": ["a", "b"],
            "input_type": "search_document",
            "embedding_types": ["float", "int8"],
        },
        EmbeddingRequest("embed-v4.0", ("a", "b"), encodings=("float", "int8"), input_type="search_document"),
        EmbeddingResult(TWO, usage=USAGE, id="emb-1"),
    ),
    "v2_inputs": EmbeddingCase(
        "cohere-embed",
        {
            "model": "embed-v4.0",
            "inputs": [
                {"content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": IMAGE}}]}
            ],
            "input_type": "search_document",
            "output_dimension": 3,
        },
        EmbeddingRequest(
            "embed-v4.0", ("a\nimage_url:13ebb5b3f1d72c5a",), 3, input_type="search_document", non_text=(0,)
        ),
        EmbeddingResult(TWO[:1], usage=USAGE, id="emb-2"),
    ),
    "v1_floats": EmbeddingCase(
        "cohere-embed-v1",
        {"texts": ["a", "b"], "model": "embed-english-v3.0", "input_type": "classification"},
        EmbeddingRequest("embed-english-v3.0", ("a", "b"), input_type="classification"),
        EmbeddingResult(TWO, usage=USAGE, id="emb-3"),
    ),
    "voyage_base64": EmbeddingCase(
        "voyage-embeddings",
        {
            "input": ["a"],
            "model": "voyage-3",
            "input_type": "document",
            "truncation": True,
            "output_dimension": 3,
            "encoding_format": "base64",
        },
        EmbeddingRequest("voyage-3", ("a",), 3, ("base64",), "document"),
        EmbeddingResult(INEXACT, "voyage-3", USAGE),
    ),
}

ITEMS = (RerankItem(2, 0.875), RerankItem(0, 0.5), RerankItem(1, 0.0625))

RERANK_CASES: dict[str, RerankCase] = {
    "v2": RerankCase(
        "cohere-rerank",
        {"model": "rerank-v3.5", "query": "q", "documents": ["a", "b", "c"], "top_n": 2},
        RerankRequest("rerank-v3.5", "q", ("a", "b", "c"), 2),
        RerankResult(ITEMS[:2], id="rr-1", search_units=1),
    ),
    "v1_documents": RerankCase(
        "cohere-rerank",
        {
            "model": "rerank-english-v3.0",
            "query": "q",
            "documents": [{"text": "a"}, "b", {"title": "c"}],
            "return_documents": True,
        },
        RerankRequest("rerank-english-v3.0", "q", ("a", "b", '{"title":"c"}'), return_documents=True),
        RerankResult((RerankItem(2, 0.875, '{"title":"c"}'), RerankItem(0, 0.5, "a")), id="rr-2", search_units=1),
    ),
    "voyage": RerankCase(
        "voyage-rerank",
        {"query": "q", "documents": ["a", "b", "c"], "model": "rerank-2", "top_k": 3, "truncation": True},
        RerankRequest("rerank-2", "q", ("a", "b", "c"), 3),
        RerankResult(ITEMS, "rerank-2", Usage(input_tokens=12)),
    ),
}
