"""Cohere `POST /v1/embed` and `/v2/embed` (docs/providers.md#embeddings-and-rerank-on-the-wire), and Cohere's body on
Bedrock.

Inputs are `texts`, `images` (data URLs) or v2 `inputs` (content lists mixing text and images). The answer
is `"embeddings_floats"` (a bare list of float vectors) when the request names no `embedding_types`, else
`"embeddings_by_type"` (an object keyed by type). Types produced: float, int8, uint8 (quantised from
the floats); binary, ubinary and base64 are not, and a request for only those gets floats.

The v2 API always answers by type (floats when no type is named: `ClientV2` cannot read anything else);
the body alone cannot tell v1 from v2, so there are two encoders, chosen by the URL (`Route.version`).
"""

import hashlib
from dataclasses import replace

from llmproxy.model import EmbeddingRequest, EmbeddingResult, Usage, Vector
from llmproxy.providers.base import JsonObject, dump_json, stable_id
from llmproxy.providers.node import Node
from llmproxy.providers.vectors import read_number, read_vector

WHAT = "cohere embed"
QUANTISED = {"int8": 0, "uint8": 128}  # type → offset added to round(v * 127)


def decode_request(body: bytes) -> EmbeddingRequest:
    root = Node.parse(body, WHAT)
    root.obj()
    inputs = [(text.string(), True) for text in root["texts"].items()]
    inputs += [(_digest("image", image.string()), False) for image in root["images"].items()]
    inputs += [_input(entry) for entry in root["inputs"].items()]
    dimension = root["output_dimension"]
    return EmbeddingRequest(
        model=root["model"].opt_string(),
        inputs=tuple(text for text, _ in inputs),
        dimensions=dimension.integer() if dimension.present else None,
        encodings=tuple(kind.string() for kind in root["embedding_types"].items()),
        input_type=root["input_type"].opt_string(),
        non_text=tuple(i for i, (_, textual) in enumerate(inputs) if not textual),
    )


def _input(node: Node) -> tuple[str, bool]:
    """A v2 input: its text parts joined, and whether it was text alone."""
    texts: list[str] = []
    textual = True
    for part in node["content"].items():
        if part["type"].string() == "text":
            texts.append(part["text"].string())
        else:
            textual = False
            texts.append(_digest(part["type"].string(), part.value))
    return "\n".join(texts), textual


def _digest(kind: str, value: object) -> str:
    return f"{kind}:" + hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def decode_response(body: bytes) -> EmbeddingResult:
    root = Node.parse(body, WHAT)
    root.obj()
    tokens = root["meta"]["billed_units"]["input_tokens"]
    return EmbeddingResult(
        vectors=_vectors(root["embeddings"]),
        usage=Usage(input_tokens=int(read_number(tokens))) if tokens.present else None,
        id=root["id"].opt_string(),
    )


def _vectors(node: Node) -> tuple[Vector, ...]:
    """Floats from a bare list, or from the by-type object: float, else int8 or uint8 scaled back."""
    if node.is_list() or not node.present:
        return tuple(read_vector(vector) for vector in node.items())
    node.obj()
    if node["float"].present:
        return tuple(read_vector(vector) for vector in node["float"].items())
    for kind, offset in QUANTISED.items():
        if node[kind].present:
            return tuple(tuple((v - offset) / 127 for v in read_vector(q)) for q in node[kind].items())
    return ()


def encode_response(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> bytes:
    """The v2 answer: always by type."""
    return dump_json(body(result, request, by_type=True))


def encode_response_v1(result: EmbeddingResult, request: EmbeddingRequest | None = None) -> bytes:
    return dump_json(body(result, request))


def body(
    result: EmbeddingResult, request: EmbeddingRequest | None, *, meta: bool = True, by_type: bool = False
) -> JsonObject:
    """The answer object, by type when asked for (or always: v2); Bedrock's has no `meta`."""
    texts = [] if request is None else [t for i, t in enumerate(request.inputs) if i not in request.non_text]
    kinds = _kinds(request, by_type)
    embeddings: object
    if kinds:
        embeddings = {kind: _encode(result.vectors, kind) for kind in kinds}
    else:
        embeddings = [list(vector) for vector in result.vectors]
    answer: JsonObject = {
        "id": _id(result, request),
        "embeddings": embeddings,
        "texts": texts,
        "response_type": "embeddings_by_type" if kinds else "embeddings_floats",
    }
    if meta:
        answer["meta"] = {"api_version": {"version": "2"}}
        if result.usage is not None:
            answer["meta"]["billed_units"] = {"input_tokens": result.usage.input_tokens}
    return answer


def _kinds(request: EmbeddingRequest | None, by_type: bool) -> list[str]:
    """The by-type keys to send: those asked for that are produced (float if none of them is); none for
    the bare list of floats."""
    if request is None or not request.encodings:
        return ["float"] if by_type else []
    kinds = [kind for kind in dict.fromkeys(request.encodings) if kind == "float" or kind in QUANTISED]
    return kinds or ["float"]


def _encode(vectors: tuple[Vector, ...], kind: str) -> list[list[float]] | list[list[int]]:
    if kind == "float":
        return [list(vector) for vector in vectors]
    offset = QUANTISED[kind]
    return [[max(-128, min(127, round(v * 127))) + offset for v in vector] for vector in vectors]


def _id(result: EmbeddingResult, request: EmbeddingRequest | None) -> str:
    return result.id or stable_id("emb_", request.inputs if request else (), len(result.vectors))


def visible(result: EmbeddingResult, request: EmbeddingRequest | None = None, *, meta: bool = True) -> EmbeddingResult:
    kinds = _kinds(request, by_type=False)
    vectors = result.vectors
    if kinds and "float" not in kinds:
        offset = QUANTISED[kinds[0]]
        vectors = tuple(tuple((q - offset) / 127 for q in row) for row in _encode(vectors, kinds[0]))
    usage = None if result.usage is None or not meta else Usage(input_tokens=result.usage.input_tokens)
    return replace(result, vectors=vectors, model=None, usage=usage, id=_id(result, request))
