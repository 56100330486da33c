"""OpenAI `POST /v1/embeddings`, also on Azure's deployment and v1 paths (docs/providers.md#azure-openai).

`input` is a string, a list of strings, one token array or a list of token arrays; the answer is a
`data` list in input order. The Python SDK asks for `encoding_format: "base64"` unless told otherwise
and decodes little-endian float32, so the encoder honours it.
"""

from dataclasses import replace

from llmproxy.model import EmbeddingRequest, EmbeddingResult, Usage, Vector
from llmproxy.providers.base import JsonObject, dump_json
from llmproxy.providers.node import Node
from llmproxy.providers.vectors import as_float32, base64_float32, input_tokens, model_of, read_vector_or_base64

WHAT = "openai embeddings"


def decode_request(body: bytes) -> EmbeddingRequest:
    root = Node.parse(body, WHAT)
    root.obj()
    inputs, non_text = read_inputs(root["input"])
    fmt = root["encoding_format"].opt_string()
    return EmbeddingRequest(
        model=root["model"].opt_string(),
        inputs=inputs,
        dimensions=root["dimensions"].integer() if root["dimensions"].present else None,
        encodings=(fmt,) if fmt else (),
        non_text=non_text,
    )


def read_inputs(node: Node) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Texts, with token arrays as `tokens:[…]` stand-ins: (inputs, positions of the token arrays)."""
    if node.is_string():
        return (node.string(),), ()
    items = list(node.items()) if node.is_list() else None
    if items is None:
        raise node.fail("a string, a list of strings or token arrays")
    if items and not items[0].is_string() and not items[0].is_list():
        return (_tokens(node),), (0,)  # one token array
    inputs = tuple(item.string() if item.is_string() else _tokens(item) for item in items)
    return inputs, tuple(i for i, item in enumerate(items) if not item.is_string())


def _tokens(node: Node) -> str:
    return "tokens:" + repr([item.integer() for item in node.items()])


def decode_response(body: bytes) -> EmbeddingResult:
    root = Node.parse(body, WHAT)
    root.obj()
    usage = root["usage"]
    return EmbeddingResult(
        vectors=read_data(root["data"]),
        model=root["model"].opt_string() or None,
        usage=Usage(input_tokens=usage["prompt_tokens"].integer()) if usage.present else None,
    )


def read_data(node: Node) -> tuple[Vector, ...]:
    """The `data` list's embeddings, put in input order by their `index`."""
    placed: dict[int, Vector] = {}
    for item in node.items():
        index = item["index"].integer()
        if index in placed:
            raise item["index"].fail("an index not seen before")
        placed[index] = read_vector_or_base64(item["embedding"])
    if sorted(placed) != list(range(len(placed))):
        raise node.fail(f"indexes 0 to {len(placed) - 1}")
    return tuple(placed[i] for i in range(len(placed)))


def encode_response(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> bytes:
    tokens = input_tokens(result)
    body = {
        "object": "list",
        "data": data(result, request),
        "model": model_of(result, request) or "",
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
    return dump_json(body)


def data(result: EmbeddingResult, request: EmbeddingRequest | None) -> list[JsonObject]:
    """`[{"object": "embedding", "embedding", "index"}]`, base64 when the request asked for it."""
    encode = base64_float32 if wants_base64(request) else list
    return [{"object": "embedding", "embedding": encode(v), "index": i} for i, v in enumerate(result.vectors)]


def wants_base64(request: EmbeddingRequest | None) -> bool:
    return request is not None and "base64" in request.encodings


def visible(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> EmbeddingResult:
    vectors = tuple(map(as_float32, result.vectors)) if wants_base64(request) else result.vectors
    return replace(
        result,
        vectors=vectors,
        model=model_of(result, request),
        usage=Usage(input_tokens=input_tokens(result)),
        id=None,
    )
