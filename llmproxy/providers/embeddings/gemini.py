"""Gemini `models/{m}:embedContent` and `:batchEmbedContents` under /v1/ and /v1beta/
(docs/providers.md#gemini).

One codec for both paths: the body says which (`requests` is the batch form), and the answer follows it:
`{"embedding": {"values"}}` for one content, `{"embeddings": [{"values"}…]}` for a batch. Keys are read in
camelCase and snake_case and written in camelCase. A content's text parts are joined into one input; a
content with other parts (inline data, files) is marked non-text. The model is in the URL (`Route.model`);
bodies name it only inside batch requests. The batch answer carries `usageMetadata` (the SDK's source
reads it); whether a single answer does is not known, so it is not sent.
"""

import hashlib
from dataclasses import replace

from llmproxy.model import EmbeddingRequest, EmbeddingResult, Usage
from llmproxy.providers.base import JsonObject, dump_json
from llmproxy.providers.node import Node
from llmproxy.providers.vectors import input_tokens, read_vector

WHAT = "gemini embeddings"


def decode_request(body: bytes) -> EmbeddingRequest:
    root = Node.parse(body, WHAT)
    root.obj()
    batch = root["requests"]
    entries = list(batch.items()) if batch.present else [root]
    contents = [_content(entry["content"]) for entry in entries]
    first = entries[0] if entries else root
    dimensions = first.first("outputDimensionality", "output_dimensionality")
    model = first["model"].opt_string()
    return EmbeddingRequest(
        model=model.removeprefix("models/") if model else None,
        inputs=tuple(text for text, _ in contents),
        dimensions=dimensions.integer() if dimensions.present else None,
        input_type=first.first("taskType", "task_type").opt_string(),
        non_text=tuple(i for i, (_, textual) in enumerate(contents) if not textual),
        single=not batch.present,
    )


def _content(node: Node) -> tuple[str, bool]:
    """A content's text parts joined, and whether it was text alone."""
    node.obj()
    texts: list[str] = []
    textual = True
    for part in node["parts"].items():
        part.obj()
        text = part["text"]
        if text.present:
            texts.append(text.string())
            continue
        textual = False
        data = part.first("inlineData", "inline_data", "fileData", "file_data")
        texts.append("part:" + hashlib.sha256(repr(data.value).encode()).hexdigest()[:16])
    return "\n".join(texts), textual


def decode_response(body: bytes) -> EmbeddingResult:
    root = Node.parse(body, WHAT)
    root.obj()
    single = root["embedding"]
    embeddings = [single] if single.present else list(root["embeddings"].items())
    usage = root.first("usageMetadata", "usage_metadata")
    tokens = usage.first("promptTokenCount", "prompt_token_count") if usage.present else usage
    return EmbeddingResult(
        vectors=tuple(read_vector(embedding["values"]) for embedding in embeddings),
        usage=Usage(input_tokens=tokens.integer()) if tokens.present else None,
    )


def encode_response(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> bytes:
    if request is not None and request.single:
        first = result.vectors[0] if result.vectors else ()
        return dump_json({"embedding": {"values": list(first)}})
    body: JsonObject = {"embeddings": [{"values": list(vector)} for vector in result.vectors]}
    if result.usage is not None:
        tokens = result.usage.input_tokens
        body["usageMetadata"] = {"promptTokenCount": tokens, "totalTokenCount": tokens}
    return dump_json(body)


def visible(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> EmbeddingResult:
    if request is not None and request.single:
        return EmbeddingResult(vectors=result.vectors[:1] or ((),))
    usage = None if result.usage is None else Usage(input_tokens=input_tokens(result))
    return replace(result, model=None, usage=usage, id=None)
