"""The official `ollama` SDK parses what llmproxy's Ollama embeddings codec serves: `embed` (`/api/embed`)
and the legacy `embeddings` (`/api/embeddings`), and errors as `ResponseError`."""

from collections.abc import Iterator

import ollama
import pytest

from llmproxy.model import EmbeddingResult, ErrorKind, Usage
from llmproxy.providers.embeddings import OLLAMA_EMBEDDINGS as CODEC
from tests.conformance.server import LoopbackServer
from tests.conformance.vector_mock import EmbeddingMock, error_reply

pytestmark = pytest.mark.conformance


@pytest.fixture
def client(loopback: LoopbackServer) -> Iterator[ollama.Client]:
    with ollama.Client(host=loopback.url) as sdk:
        yield sdk


@pytest.mark.parametrize("texts", ["why is the sky blue?", ["one", "two 🚀"]])
def test_embed(loopback: LoopbackServer, client: ollama.Client, texts: str | list[str]) -> None:
    mock = EmbeddingMock(CODEC)
    loopback.queue(mock)
    response = client.embed(model="nomic-embed-text", input=texts, dimensions=32)
    assert loopback.received[0].path == "/api/embed"
    assert mock.request.dimensions == 32
    parsed = EmbeddingResult(
        vectors=tuple(tuple(v) for v in response.embeddings),
        model=response.model,
        usage=Usage(input_tokens=response.prompt_eval_count or 0),
    )
    assert parsed == mock.expected
    assert {len(v) for v in response.embeddings} == {32}


def test_legacy_embeddings(loopback: LoopbackServer, client: ollama.Client) -> None:
    mock = EmbeddingMock(CODEC)
    loopback.queue(mock)
    response = client.embeddings(model="nomic-embed-text", prompt="hello")
    assert loopback.received[0].path == "/api/embeddings"
    assert mock.request.single
    assert EmbeddingResult(vectors=(tuple(response.embedding),)) == mock.expected
    assert len(response.embedding) == 768


@pytest.mark.parametrize("kind", [ErrorKind.NOT_FOUND, ErrorKind.SERVER_ERROR])
def test_errors(loopback: LoopbackServer, client: ollama.Client, kind: ErrorKind) -> None:
    reply = CODEC.encode_error(kind, 'model "nope" not found, try pulling it first')
    loopback.queue(error_reply(reply))
    with pytest.raises(ollama.ResponseError) as caught:
        client.embed(model="nope", input="hi")
    assert (caught.value.status_code, caught.value.error) == (
        reply.status,
        'model "nope" not found, try pulling it first',
    )
