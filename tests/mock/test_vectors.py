"""Mock embeddings and rerank: unit length, determinism, seeds, sizes, and rerank ordering."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.errors import UnsupportedError
from llmproxy.mock.embedding_models import FALLBACK_DIMENSIONS, default_dimensions
from llmproxy.mock.vectors import embed, estimate_tokens, relevance, rerank, unit_vector
from llmproxy.model import EmbeddingRequest, RerankRequest, Usage
from tests.providers.strategies import texts

sizes = st.integers(1, 300)
seeds = st.none() | st.integers(-(2**63), 2**63)


def norm(vector: tuple[float, ...]) -> float:
    return math.sqrt(math.fsum(v * v for v in vector))


@given(text=texts, dimensions=sizes, seed=seeds)
def test_vectors_are_unit_length_and_deterministic(text: str, dimensions: int, seed: int | None) -> None:
    vector = unit_vector(text, dimensions, seed)
    assert len(vector) == dimensions
    assert abs(norm(vector) - 1) <= 1e-6
    assert unit_vector(text, dimensions, seed) == vector


@given(text=texts, dimensions=st.integers(8, 300), seed=st.integers(0, 1000))
def test_different_seeds_and_texts_differ(text: str, dimensions: int, seed: int) -> None:
    vector = unit_vector(text, dimensions, seed)
    assert unit_vector(text, dimensions, seed + 1) != vector
    assert unit_vector(text, dimensions, None) != vector
    assert unit_vector(text + "x", dimensions, seed) != vector


@given(text=texts, short=st.integers(1, 64), extra=st.integers(1, 64))
def test_a_shorter_vector_is_a_renormalised_prefix(text: str, short: int, extra: int) -> None:
    long = unit_vector(text, short + extra)
    prefix = long[:short]
    assert unit_vector(text, short) == pytest.approx(tuple(v / norm(prefix) for v in prefix), rel=1e-9, abs=1e-12)


def test_vectors_are_pinned() -> None:
    """Tests written against the mock may rely on these numbers: changing them breaks the mock's users."""
    expected = [-0.6872514112944975, 0.37620506335684095, -0.4431740018203901, -0.43560538574367713]
    assert list(unit_vector("hello", 4)) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("dimensions", [0, -1, 65_537])
def test_impossible_sizes_are_refused(dimensions: int) -> None:
    with pytest.raises(UnsupportedError):
        unit_vector("x", dimensions)


@pytest.mark.parametrize(
    ("model", "size"),
    [
        ("text-embedding-3-small", 1536),
        ("text-embedding-3-large", 3072),
        ("text-embedding-ada-002", 1536),
        ("models/gemini-embedding-001", 3072),
        ("text-embedding-004", 768),
        ("amazon.titan-embed-text-v1", 1536),
        ("amazon.titan-embed-text-v2:0", 1024),
        ("cohere.embed-english-v3", 1024),
        ("embed-english-light-v3.0", 384),
        ("us.cohere.embed-v4:0", 1536),
        ("embed-v4.0", 1536),
        ("voyage-3", 1024),
        ("voyage-3-lite", 512),
        ("nomic-embed-text:latest", 768),
        ("something-else", FALLBACK_DIMENSIONS),
        (None, FALLBACK_DIMENSIONS),
    ],
)
def test_default_dimensions(model: str | None, size: int) -> None:
    assert default_dimensions(model) == size


def test_embed_uses_the_requested_or_default_size() -> None:
    request = EmbeddingRequest(model="voyage-3-lite", inputs=("a", "bb", "a"))
    result = embed(request)
    assert [len(v) for v in result.vectors] == [512] * 3
    assert result.vectors[0] == result.vectors[2] != result.vectors[1]
    assert result.model == "voyage-3-lite"
    assert result.usage == Usage(input_tokens=3, estimated=True)
    assert [len(v) for v in embed(EmbeddingRequest("voyage-3-lite", ("a",), dimensions=8)).vectors] == [8]
    assert embed(EmbeddingRequest("m", ("a",)), seed=1) != embed(EmbeddingRequest("m", ("a",)), seed=2)


def test_token_estimate() -> None:
    assert [estimate_tokens(t) for t in ["", "a", "abcd", "abcde", "🚀"]] == [0, 1, 1, 2, 1]


@given(query=texts, documents=st.lists(texts, max_size=8), top_n=st.none() | st.integers(-1, 10), seed=seeds)
def test_rerank_orders_scores_and_caps(query: str, documents: list[str], top_n: int | None, seed: int | None) -> None:
    request = RerankRequest("rerank-x", query, tuple(documents), top_n, return_documents=True)
    result = rerank(request, seed=seed)
    scores = [item.relevance_score for item in result.items]
    assert scores == sorted(scores, reverse=True)
    assert all(0 <= score < 1 for score in scores)
    assert len(result.items) == (len(documents) if top_n is None else min(len(documents), max(0, top_n)))
    assert len({item.index for item in result.items}) == len(result.items)
    assert all(item.document == documents[item.index] for item in result.items)
    assert all(item.relevance_score == relevance(query, documents[item.index], seed) for item in result.items)
    assert rerank(request, seed=seed) == result


def test_rerank_puts_matching_documents_first() -> None:
    documents = ("Berlin is in Germany.", "Paris is the capital of France.", "Bananas.")
    result = rerank(RerankRequest(None, "capital of France", documents, top_n=2))
    assert [item.index for item in result.items] == [1, 0]
    assert all(item.document is None for item in result.items)
    assert result.search_units == 1
