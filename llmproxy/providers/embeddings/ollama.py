"""Ollama `POST /api/embed` and the legacy `POST /api/embeddings` (docs/providers.md#ollama).

One codec for both: the body says which (`prompt` is the legacy form) and the answer follows it:
`{"model", "embeddings": [[…]], "prompt_eval_count"}` or the bare `{"embedding": […]}`.
"""

from dataclasses import replace

from llmproxy.model import EmbeddingRequest, EmbeddingResult, Usage
from llmproxy.providers.base import JsonObject, dump_json
from llmproxy.providers.node import Node
from llmproxy.providers.vectors import model_of, read_texts, read_vector

WHAT = "ollama embeddings"


def decode_request(body: bytes) -> EmbeddingRequest:
    root = Node.parse(body, WHAT)
    root.obj()
    legacy = root["prompt"].present
    inputs = (root["prompt"].string(),) if legacy else read_texts(root["input"]) if root["input"].present else ()
    return EmbeddingRequest(
        model=root["model"].opt_string(),
        inputs=inputs,
        dimensions=root["dimensions"].integer() if root["dimensions"].present else None,
        single=legacy,
    )


def decode_response(body: bytes) -> EmbeddingResult:
    root = Node.parse(body, WHAT)
    root.obj()
    if root["embedding"].present:
        return EmbeddingResult(vectors=(read_vector(root["embedding"]),))
    count = root["prompt_eval_count"]
    return EmbeddingResult(
        vectors=tuple(read_vector(vector) for vector in root["embeddings"].items()),
        model=root["model"].opt_string() or None,
        usage=Usage(input_tokens=count.integer()) if count.present else None,
    )


def encode_response(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> bytes:
    if request is not None and request.single:
        return dump_json({"embedding": list(result.vectors[0]) if result.vectors else []})
    body: JsonObject = {"model": model_of(result, request) or "", "embeddings": [list(v) for v in result.vectors]}
    if result.usage is not None:
        body["prompt_eval_count"] = result.usage.input_tokens
    return dump_json(body)


def visible(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> EmbeddingResult:
    if request is not None and request.single:
        return EmbeddingResult(vectors=result.vectors[:1] or ((),))
    usage = None if result.usage is None else Usage(input_tokens=result.usage.input_tokens)
    return replace(result, model=model_of(result, request), usage=usage, id=None)
