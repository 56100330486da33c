"""Mock embeddings and rerank results: pure functions of the request (and an optional seed).

* A vector is Gaussian noise seeded by a hash of (seed, text), normalised to length 1: the same text
  always gets the same vector, different texts and different seeds get unrelated ones. The first `d`
  values do not depend on the size asked for, so a shorter vector is a renormalised prefix of a longer
  one, as with OpenAI's and Gemini's shortened embeddings.
* A rerank score is 0.8 × (share of the query's words found in the document) + 0.2 × a hash of (seed,
  query, document): documents that contain the query come first, and ties are broken deterministically.
  Scores lie in [0, 1).
* Token counts are estimates (about four UTF-8 bytes per token), marked `estimated`.
"""

import hashlib
import math
import random
import re
from typing import Final

from llmproxy.errors import UnsupportedError
from llmproxy.mock.embedding_models import default_dimensions
from llmproxy.model import (
    EmbeddingRequest,
    EmbeddingResult,
    RerankItem,
    RerankRequest,
    RerankResult,
    Usage,
    Vector,
)

MAX_DIMENSIONS: Final = 65_536
_WORD = re.compile(r"\w+")


def unit_vector(text: str, dimensions: int, seed: int | None = None) -> Vector:
    """A deterministic vector of length 1 for the text."""
    if not 1 <= dimensions <= MAX_DIMENSIONS:
        raise UnsupportedError(f"cannot make a vector of {dimensions} dimensions (1 to {MAX_DIMENSIONS})")
    rng = random.Random(_digest(seed, text))
    values = [rng.gauss(0.0, 1.0) for _ in range(dimensions)]
    norm = math.sqrt(math.fsum(v * v for v in values))
    return tuple(v / norm for v in values)


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text.encode()) / 4)


def embed(request: EmbeddingRequest, *, seed: int | None = None) -> EmbeddingResult:
    """One vector per input, of the requested size or the model's default. Set `request.model` from the
    URL first for APIs that name the model there (Gemini, Bedrock, Azure deployments)."""
    dimensions = request.dimensions or default_dimensions(request.model)
    return EmbeddingResult(
        vectors=tuple(unit_vector(text, dimensions, seed) for text in request.inputs),
        model=request.model,
        usage=Usage(input_tokens=sum(map(estimate_tokens, request.inputs)), estimated=True),
    )


def relevance(query: str, document: str, seed: int | None = None) -> float:
    """A deterministic score in [0, 1): word overlap with the query, plus a little hashed jitter."""
    asked = set(_WORD.findall(query.lower()))
    found = asked & set(_WORD.findall(document.lower()))
    overlap = len(found) / len(asked) if asked else 0.0
    jitter = int.from_bytes(_digest(seed, query, document)[:8]) / 2**64
    return 0.8 * overlap + 0.2 * jitter


def rerank(request: RerankRequest, *, seed: int | None = None) -> RerankResult:
    """The documents best first (ties by position), at most `top_n`, with their text when asked for."""
    scores = [relevance(request.query, document, seed) for document in request.documents]
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    if request.top_n is not None:
        order = order[: max(0, request.top_n)]
    items = tuple(RerankItem(i, scores[i], request.documents[i] if request.return_documents else None) for i in order)
    tokens = sum(estimate_tokens(request.query) + estimate_tokens(document) for document in request.documents)
    return RerankResult(
        items=items,
        model=request.model,
        usage=Usage(input_tokens=tokens, estimated=True),
        search_units=1,
    )


def _digest(seed: int | None, *texts: str) -> bytes:
    return hashlib.sha256(repr((seed, *texts)).encode()).digest()
