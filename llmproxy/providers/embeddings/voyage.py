"""Voyage `POST /v1/embeddings` (api.voyageai.com; docs/providers.md#embeddings-and-rerank-on-the-wire).

OpenAI's envelope (`data` list with indexes, base64 float32 on request) with Voyage's options
(`input_type`, `output_dimension`, `output_dtype`, `truncation`) and `usage.total_tokens`. The SDK asks
for base64 unless told otherwise. Only float output is produced: `output_dtype` int8/binary is read but
answered with floats.
"""

from llmproxy.model import EmbeddingRequest, EmbeddingResult
from llmproxy.providers.base import dump_json
from llmproxy.providers.embeddings.openai import data, read_data, visible
from llmproxy.providers.node import Node
from llmproxy.providers.vectors import input_tokens, model_of, read_optional_tokens, read_texts

WHAT = "voyage embeddings"


def decode_request(body: bytes) -> EmbeddingRequest:
    root = Node.parse(body, WHAT)
    root.obj()
    fmt = root["encoding_format"].opt_string()
    dimension = root["output_dimension"]
    return EmbeddingRequest(
        model=root["model"].opt_string(),
        inputs=read_texts(root["input"]),
        dimensions=dimension.integer() if dimension.present else None,
        encodings=(fmt,) if fmt else (),
        input_type=root["input_type"].opt_string(),
    )


def decode_response(body: bytes) -> EmbeddingResult:
    root = Node.parse(body, WHAT)
    root.obj()
    return EmbeddingResult(
        vectors=read_data(root["data"]),
        model=root["model"].opt_string() or None,
        usage=read_optional_tokens(root["usage"]["total_tokens"]),
    )


def encode_response(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> bytes:
    body = {
        "object": "list",
        "data": data(result, request),
        "model": model_of(result, request) or "",
        "usage": {"total_tokens": input_tokens(result)},
    }
    return dump_json(body)


__all__ = ["decode_request", "decode_response", "encode_response", "visible"]
