"""The official `voyageai` SDK parses what llmproxy's Voyage embeddings and rerank codecs serve (the SDK asks
for base64 by default and decodes float32 itself), and raises its own error classes for `{"detail"}` bodies.
The client is pointed at the loopback with `base_url`."""

import pytest
import voyageai
import voyageai.error

from llmproxy.model import EmbeddingResult, ErrorKind, RerankItem, RerankResult, Usage
from llmproxy.providers.embeddings import VOYAGE_EMBEDDINGS
from llmproxy.providers.rerank import VOYAGE_RERANK
from tests.conformance.server import LoopbackServer
from tests.conformance.vector_mock import EmbeddingMock, RerankMock, error_reply

pytestmark = pytest.mark.conformance


def client(loopback: LoopbackServer) -> voyageai.Client:
    return voyageai.Client(api_key="pa-test", base_url=loopback.url + "/v1")


@pytest.mark.parametrize("dimension", [None, 256])
def test_embed(loopback: LoopbackServer, dimension: int | None) -> None:
    mock = EmbeddingMock(VOYAGE_EMBEDDINGS)
    loopback.queue(mock)
    texts = ["Sample text 1", "Tōkyō 🚀"]
    response = client(loopback).embed(texts, model="voyage-3-lite", input_type="document", output_dimension=dimension)
    assert loopback.received[0].path == "/v1/embeddings"
    assert loopback.received[0].headers["authorization"] == "Bearer pa-test"
    assert mock.request.encodings == ("base64",)
    assert mock.request.input_type == "document"
    parsed = EmbeddingResult(
        vectors=tuple(tuple(v) for v in response.embeddings),
        model=mock.request.model,  # the SDK keeps only vectors and tokens
        usage=Usage(input_tokens=response.total_tokens),
    )
    assert parsed == mock.expected
    assert {len(v) for v in response.embeddings} == {dimension or 512}


def test_rerank(loopback: LoopbackServer) -> None:
    mock = RerankMock(VOYAGE_RERANK)
    loopback.queue(mock)
    documents = ["Paris is in France.", "Berlin is in Germany.", "France, with Paris, borders Spain."]
    response = client(loopback).rerank("Where is Paris, France?", documents, model="rerank-2", top_k=2)
    assert loopback.received[0].path == "/v1/rerank"
    assert mock.request.top_n == 2
    parsed = RerankResult(
        items=tuple(RerankItem(r.index, r.relevance_score) for r in response.results),
        model=mock.request.model,
        usage=Usage(input_tokens=response.total_tokens),
    )
    assert parsed == mock.expected
    assert [r.document for r in response.results] == [documents[0], documents[2]]


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        (ErrorKind.INVALID_REQUEST, voyageai.error.InvalidRequestError),
        (ErrorKind.AUTHENTICATION, voyageai.error.AuthenticationError),
        (ErrorKind.RATE_LIMIT, voyageai.error.RateLimitError),
        (ErrorKind.SERVER_ERROR, voyageai.error.ServerError),
        (ErrorKind.OVERLOADED, voyageai.error.ServiceUnavailableError),
    ],
)
def test_errors(loopback: LoopbackServer, kind: ErrorKind, error: type[Exception]) -> None:
    reply = VOYAGE_EMBEDDINGS.encode_error(kind, "llmproxy says no")
    loopback.queue(error_reply(reply))
    with pytest.raises(error) as caught:
        client(loopback).embed(["x"], model="voyage-3")
    assert type(caught.value) is error
    assert getattr(caught.value, "http_status", None) == reply.status
