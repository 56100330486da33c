"""Embedding bodies of Bedrock's `InvokeModel` (`POST /model/{id}/invoke`), chosen by model id
(docs/providers.md#aws-bedrock).

* Amazon Titan embeddings (`amazon.titan-embed-text-v1`, `-text-v2:0`, `-image-v1`): `{"inputText"?,
  "inputImage"?, "dimensions"?, "normalize"?, "embeddingTypes"?}` → `{"embedding", "inputTextTokenCount",
  "embeddingsByType"?}`. One input per call (text, an image, or both: then it counts as non-text).
* Cohere Embed on Bedrock (`cohere.embed-*`): Cohere's own v1 body (see `cohere`), answered without `meta`.
"""

import hashlib

from llmproxy.model import EmbeddingRequest, EmbeddingResult, Usage
from llmproxy.providers.base import JsonObject, dump_json
from llmproxy.providers.embeddings import cohere
from llmproxy.providers.node import Node
from llmproxy.providers.vectors import input_tokens, read_vector

WHAT = "bedrock titan embeddings"


def titan_decode_request(body: bytes) -> EmbeddingRequest:
    root = Node.parse(body, WHAT)
    root.obj()
    text = root["inputText"].opt_string() or ""
    image = root["inputImage"].opt_string()
    if image is not None:
        text += "\nimage:" + hashlib.sha256(image.encode()).hexdigest()[:16]
    return EmbeddingRequest(
        model=None,  # named by the URL
        inputs=(text,),
        non_text=() if image is None else (0,),
        dimensions=root["dimensions"].integer() if root["dimensions"].present else None,
        encodings=tuple(kind.string() for kind in root["embeddingTypes"].items()),
        single=True,
    )


def titan_decode_response(body: bytes) -> EmbeddingResult:
    root = Node.parse(body, WHAT)
    root.obj()
    embedding = root["embedding"] if root["embedding"].present else root["embeddingsByType"]["float"]
    count = root["inputTextTokenCount"]
    return EmbeddingResult(
        vectors=(read_vector(embedding),),
        usage=Usage(input_tokens=count.integer()) if count.present else None,
    )


def titan_encode_response(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> bytes:
    vector = list(result.vectors[0]) if result.vectors else []
    body: JsonObject = {"embedding": vector, "inputTextTokenCount": input_tokens(result)}
    if request is not None and "float" in request.encodings:
        body["embeddingsByType"] = {"float": vector}
    return dump_json(body)


def titan_visible(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> EmbeddingResult:
    del request  # one shape for every request
    return EmbeddingResult(vectors=result.vectors[:1] or ((),), usage=Usage(input_tokens=input_tokens(result)))


def cohere_encode_response(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> bytes:
    return dump_json(cohere.body(result, request, meta=False))


def cohere_visible(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> EmbeddingResult:
    return cohere.visible(result, request, meta=False)
