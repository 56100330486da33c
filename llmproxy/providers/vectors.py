"""What every embedding and rerank codec offers, and the wire helpers they share
(docs/providers.md#embeddings-and-rerank).

Like `ChatCodec`, a codec is a record of functions over bytes. Unlike chat, the answer's shape depends on
the request (base64 or floats, one vector or a list, Cohere's by-type object), so `encode_response` takes
the neutral request the body decoded to: a mock decodes the request, makes a result, and encodes it with
the same request.
"""

import base64
import binascii
import math
import sys
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from llmproxy.model import (
    EmbeddingRequest,
    EmbeddingResult,
    Operation,
    Provider,
    ProviderError,
    RerankRequest,
    RerankResult,
    Usage,
    Vector,
)
from llmproxy.providers.base import EncodeError
from llmproxy.providers.node import Node


class EncodeEmbeddings(Protocol):
    def __call__(self, result: EmbeddingResult, request: EmbeddingRequest | None = None, /) -> bytes: ...


class EncodeRerank(Protocol):
    def __call__(self, result: RerankResult, request: RerankRequest | None = None, /) -> bytes: ...


@dataclass(frozen=True, slots=True)
class EmbeddingCodec:
    """One embeddings API's wire format (OpenAI `/v1/embeddings`, Gemini `batchEmbedContents`, Titan…)."""

    provider: Provider
    operation: Operation

    decode_request: Callable[[bytes], EmbeddingRequest]
    """The request body, neutral. Raises `ParseError` on anything that is not this format."""

    decode_response: Callable[[bytes], EmbeddingResult]
    """A response body as a result (base64 vectors decoded). Raises `ParseError`."""

    encode_response: EncodeEmbeddings
    """The body a real server sends for the result, in the shape and number format the request asked for
    (floats when there is no request). Vectors must be finite; base64 carries them as float32."""

    visible: Callable[[EmbeddingResult, EmbeddingRequest | None], EmbeddingResult]
    """The part of a result the answer to this request carries: ``decode(encode(r, q)) == visible(r, q)``
    (base64 rounds to float32, a bare vector drops model and usage…)."""

    decode_error: Callable[[int, bytes], ProviderError]
    """An error response (status, body) as a ProviderError; unknown shapes still give a kind from the status."""

    encode_error: EncodeError
    """The provider-correct error response for a kind, with `retry-after` when given."""


@dataclass(frozen=True, slots=True)
class RerankCodec:
    """One rerank API's wire format (Cohere `/v1|v2/rerank`, Voyage `/v1/rerank`)."""

    provider: Provider
    operation: Operation
    decode_request: Callable[[bytes], RerankRequest]
    decode_response: Callable[[bytes], RerankResult]
    encode_response: EncodeRerank
    """The body for the result; documents are sent for the items that carry one."""
    visible: Callable[[RerankResult, RerankRequest | None], RerankResult]
    """The part of a result the answer to this request carries: ``decode(encode(r, q)) == visible(r, q)``."""
    decode_error: Callable[[int, bytes], ProviderError]
    encode_error: EncodeError


# -- reading -------------------------------------------------------------------------------------------


def read_number(node: Node) -> float:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise node.fail("a number")
    return float(value)


def read_vector(node: Node) -> Vector:
    """A JSON list of numbers as floats."""
    if not node.is_list():
        raise node.fail("a list of numbers")
    return tuple(read_number(item) for item in node.items())


def read_texts(node: Node) -> tuple[str, ...]:
    """A string or a list of strings, as most APIs accept for their inputs."""
    if node.is_string():
        return (node.string(),)
    if not node.is_list():
        raise node.fail("a string or a list of strings")
    return tuple(item.string() for item in node.items())


def read_vector_or_base64(node: Node) -> Vector:
    """An embedding sent as numbers, or as base64 of little-endian float32 (OpenAI, Voyage)."""
    if not node.is_string():
        return read_vector(node)
    try:
        raw = base64.b64decode(node.string(), validate=True)
    except (binascii.Error, ValueError):
        raise node.fail("base64 of float32 values") from None
    if len(raw) % 4:
        raise node.fail("base64 of float32 values (a multiple of 4 bytes)")
    values = array("f", raw)
    if sys.byteorder == "big":
        values.byteswap()
    if not all(map(math.isfinite, values)):
        raise node.fail("base64 of finite float32 values")
    return tuple(values)


def read_optional_tokens(node: Node) -> Usage | None:
    """A token count as usage (the input tokens an embedding or rerank call billed), if present."""
    return Usage(input_tokens=node.integer()) if node.present else None


# -- writing -------------------------------------------------------------------------------------------


def base64_float32(vector: Vector) -> str:
    """A vector as base64 of little-endian float32, as the OpenAI and Voyage SDKs decode it."""
    values = array("f", vector)
    if sys.byteorder == "big":
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode()


def as_float32(vector: Vector) -> Vector:
    """The vector as a float32 wire carries it."""
    return tuple(array("f", vector))


def input_tokens(result: EmbeddingResult | RerankResult) -> int:
    return result.usage.input_tokens if result.usage is not None else 0


def model_of(result: EmbeddingResult | RerankResult, request: EmbeddingRequest | RerankRequest | None) -> str | None:
    """The result's model, else the one the request named (servers echo it)."""
    return result.model or (request.model if request is not None else None) or None


def read_rerank_request(body: bytes, what: str, top: str, document: Callable[[Node], str]) -> RerankRequest:
    """A rerank request: the query and the documents (each read by `document`), how many to return under the
    API's own key (`top`: Cohere's `top_n`, Voyage's `top_k`), and whether to echo the documents."""
    root = Node.parse(body, what)
    root.obj()
    return RerankRequest(
        model=root["model"].opt_string(),
        query=root["query"].string(),
        documents=tuple(document(item) for item in root["documents"].items()),
        top_n=root[top].integer() if root[top].present else None,
        return_documents=root["return_documents"].boolean(),
    )
