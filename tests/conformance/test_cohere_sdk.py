"""The official `cohere` SDK (v2 `ClientV2` and v1 `Client`) parses what llmproxy's Cohere embed and rerank
codecs serve, and raises its own error classes for Cohere error bodies."""

from collections.abc import Iterator
from typing import Any

import cohere
import httpx
import pytest
from cohere.core.api_error import ApiError

from llmproxy.model import EmbeddingResult, ErrorKind, RerankItem, RerankResult, Usage
from llmproxy.providers.embeddings import COHERE_EMBEDDINGS, COHERE_EMBEDDINGS_V1
from llmproxy.providers.rerank import COHERE_RERANK
from tests.conformance.server import LoopbackServer
from tests.conformance.vector_mock import EmbeddingMock, RerankMock, error_reply

pytestmark = pytest.mark.conformance

TEXTS = ["hello", "goodbye 🚀", ""]
DOCUMENTS = ["Carson City is the capital of Nevada.", "The capital of France is Paris.", "Paris, Texas."]
NO_RETRIES: Any = {"max_retries": 0}


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


@pytest.fixture
def v2(loopback: LoopbackServer, http: httpx.Client) -> cohere.ClientV2:
    return cohere.ClientV2(api_key="test-key", base_url=loopback.url, httpx_client=http)


@pytest.fixture
def v1(loopback: LoopbackServer, http: httpx.Client) -> cohere.Client:
    return cohere.Client(api_key="test-key", base_url=loopback.url, httpx_client=http)


def usage(meta: Any) -> Usage | None:
    units = meta.billed_units if meta is not None else None
    return None if units is None or units.input_tokens is None else Usage(input_tokens=int(units.input_tokens))


@pytest.mark.parametrize("types", [None, ["float"], ["int8"], ["uint8", "float"]])
def test_v2_embed(loopback: LoopbackServer, v2: cohere.ClientV2, types: list[str] | None) -> None:
    """Without `embedding_types` v2 still answers by type (floats): the SDK reads nothing else."""
    mock = EmbeddingMock(COHERE_EMBEDDINGS)
    loopback.queue(mock)
    options: Any = {} if types is None else {"embedding_types": types}
    response = v2.embed(model="embed-v4.0", input_type="search_document", texts=TEXTS, **options)
    types = types or ["float"]
    assert loopback.received[0].path == "/v2/embed"
    assert response.texts == TEXTS
    embeddings = response.embeddings
    if "float" in types:
        vectors = tuple(tuple(v) for v in embeddings.float_ or ())
    else:
        vectors = tuple(tuple(q / 127 for q in v) for v in embeddings.int8 or ())
    assert EmbeddingResult(vectors, usage=usage(response.meta), id=response.id) == mock.expected
    assert {len(v) for v in vectors} == {1536}


def test_v2_embed_output_dimension(loopback: LoopbackServer, v2: cohere.ClientV2) -> None:
    mock = EmbeddingMock(COHERE_EMBEDDINGS)
    loopback.queue(mock)
    response = v2.embed(
        model="embed-v4.0", input_type="search_query", texts=["q"], embedding_types=["float"], output_dimension=256
    )
    assert mock.request.input_type == "search_query"
    assert [len(v) for v in response.embeddings.float_ or ()] == [256]


def test_v1_embed_floats(loopback: LoopbackServer, v1: cohere.Client) -> None:
    mock = EmbeddingMock(COHERE_EMBEDDINGS_V1)
    loopback.queue(mock)
    response = v1.embed(texts=TEXTS, model="embed-english-light-v3.0", input_type="classification")
    assert loopback.received[0].path == "/v1/embed"
    assert response.response_type == "embeddings_floats"
    vectors = tuple(tuple(v) for v in response.embeddings)  # type: ignore[union-attr]
    assert EmbeddingResult(vectors, usage=usage(response.meta), id=response.id) == mock.expected
    assert {len(v) for v in vectors} == {384}


# cohere 7.3's v1 union parsing uses pydantic APIs that pydantic 2 deprecates (`model_fields` on an instance,
# `parse_obj`): the SDK's warnings, not ours
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")
def test_v1_embed_by_type(loopback: LoopbackServer, v1: cohere.Client) -> None:
    mock = EmbeddingMock(COHERE_EMBEDDINGS_V1)
    loopback.queue(mock)
    response = v1.embed(texts=["a"], model="embed-english-v3.0", input_type="search_query", embedding_types=["float"])
    assert response.response_type == "embeddings_by_type"
    vectors = tuple(tuple(v) for v in response.embeddings.float_ or ())  # type: ignore[union-attr]
    assert EmbeddingResult(vectors, usage=usage(response.meta), id=response.id) == mock.expected


def rerank_result(response: Any) -> RerankResult:
    units = response.meta.billed_units if response.meta else None
    return RerankResult(
        items=tuple(
            RerankItem(r.index, r.relevance_score, r.document.text if getattr(r, "document", None) else None)
            for r in response.results
        ),
        id=response.id,
        search_units=None if units is None or units.search_units is None else int(units.search_units),
    )


def test_v2_rerank(loopback: LoopbackServer, v2: cohere.ClientV2) -> None:
    mock = RerankMock(COHERE_RERANK)
    loopback.queue(mock)
    response = v2.rerank(model="rerank-v3.5", query="What is the capital of France?", documents=DOCUMENTS, top_n=2)
    assert loopback.received[0].path == "/v2/rerank"
    assert rerank_result(response) == mock.expected
    assert [r.index for r in response.results] == [1, 0]  # most query words first


def test_v1_rerank_with_documents(loopback: LoopbackServer, v1: cohere.Client) -> None:
    mock = RerankMock(COHERE_RERANK)
    loopback.queue(mock)
    response = v1.rerank(
        model="rerank-english-v3.0", query="capital of Nevada", documents=DOCUMENTS, return_documents=True
    )
    assert loopback.received[0].path == "/v1/rerank"
    assert rerank_result(response) == mock.expected
    assert response.results[0].document is not None
    assert response.results[0].document.text == DOCUMENTS[0]


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        (ErrorKind.INVALID_REQUEST, cohere.BadRequestError),
        (ErrorKind.AUTHENTICATION, cohere.UnauthorizedError),
        (ErrorKind.RATE_LIMIT, cohere.TooManyRequestsError),
        (ErrorKind.SERVER_ERROR, cohere.InternalServerError),
    ],
)
def test_errors(loopback: LoopbackServer, v2: cohere.ClientV2, kind: ErrorKind, error: type[ApiError]) -> None:
    reply = COHERE_EMBEDDINGS.encode_error(kind, "llmproxy says no")
    loopback.queue(error_reply(reply))
    with pytest.raises(error) as caught:
        v2.embed(model="embed-v4.0", input_type="search_document", texts=["x"], request_options=NO_RETRIES)
    assert (caught.value.status_code, caught.value.body) == (reply.status, {"message": "llmproxy says no"})
