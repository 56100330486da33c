"""The official `openai` SDK (OpenAI and AzureOpenAI clients) parses what llmproxy's embeddings codec
serves: floats, the SDK's default base64 (little-endian float32), shortened vectors, token-array inputs,
and errors as the SDK's classes."""

import base64
import struct
from collections.abc import Iterator

import openai
import pytest
from openai import AzureOpenAI, OpenAI
from openai.types import CreateEmbeddingResponse

from llmproxy.model import EmbeddingResult, ErrorKind, Operation, Provider, Route, Usage
from llmproxy.providers.embeddings import OPENAI_EMBEDDINGS as CODEC
from llmproxy.providers.registry import embedding_codec
from llmproxy.providers.routes import detect
from tests.conformance.server import LoopbackServer
from tests.conformance.vector_mock import EmbeddingMock, error_reply, model_in_url

pytestmark = pytest.mark.conformance

TEXTS = ["The food was delicious.", "Tōkyō 🚀\nnew line", ""]


@pytest.fixture
def client(loopback: LoopbackServer) -> Iterator[OpenAI]:
    with OpenAI(api_key="test-key", base_url=loopback.url + "/v1", max_retries=0) as sdk:
        yield sdk


def floats(embedding: list[float] | str) -> tuple[float, ...]:
    """An embedding as the SDK hands it over: floats, or (when base64 was asked for explicitly) the string,
    which the caller unpacks as little-endian float32."""
    if isinstance(embedding, str):
        raw = base64.b64decode(embedding)
        return struct.unpack(f"<{len(raw) // 4}f", raw)
    return tuple(embedding)


def from_sdk(response: CreateEmbeddingResponse) -> EmbeddingResult:
    data = sorted(response.data, key=lambda item: item.index)
    return EmbeddingResult(
        vectors=tuple(floats(item.embedding) for item in data),
        model=response.model or None,
        usage=Usage(input_tokens=response.usage.prompt_tokens),
    )


@pytest.mark.parametrize("encoding", ["float", "base64", None])
def test_embeddings(loopback: LoopbackServer, client: OpenAI, encoding: str | None) -> None:
    """None is the SDK's default: it asks for base64 and decodes float32 itself."""
    mock = EmbeddingMock(CODEC)
    loopback.queue(mock)
    options = {} if encoding is None else {"encoding_format": encoding}
    response = client.embeddings.create(model="text-embedding-3-small", input=TEXTS, **options)  # type: ignore[arg-type]
    assert mock.request.encodings == (encoding or "base64",)
    assert from_sdk(response) == mock.expected
    assert [len(v) for v in mock.expected.vectors] == [1536] * 3
    assert loopback.received[0].path == "/v1/embeddings"


@pytest.mark.parametrize("numpy", [True, False])
def test_default_base64_with_and_without_numpy(
    loopback: LoopbackServer, client: OpenAI, monkeypatch: pytest.MonkeyPatch, numpy: bool
) -> None:
    """The SDK decodes base64 with numpy when it is installed, else with `array`: both read float32."""
    monkeypatch.setattr("openai.lib._parsing._embeddings.has_numpy", lambda: numpy)
    mock = EmbeddingMock(CODEC)
    loopback.queue(mock)
    response = client.embeddings.create(model="text-embedding-3-small", input="hello", dimensions=8)
    assert from_sdk(response) == mock.expected
    assert response.data[0].embedding == list(mock.expected.vectors[0])


def test_dimensions_and_token_arrays(loopback: LoopbackServer, client: OpenAI) -> None:
    mock = EmbeddingMock(CODEC)
    loopback.queue(mock)
    response = client.embeddings.create(model="text-embedding-3-large", input=[[1, 2, 3], [4]], dimensions=64)
    assert mock.request.non_text == (0, 1)
    assert mock.request.inputs == ("tokens:[1, 2, 3]", "tokens:[4]")
    assert from_sdk(response) == mock.expected
    assert [len(item.embedding) for item in response.data] == [64, 64]


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        (ErrorKind.INVALID_REQUEST, openai.BadRequestError),
        (ErrorKind.RATE_LIMIT, openai.RateLimitError),
        (ErrorKind.SERVER_ERROR, openai.InternalServerError),
    ],
)
def test_errors(loopback: LoopbackServer, client: OpenAI, kind: ErrorKind, error: type[Exception]) -> None:
    loopback.queue(error_reply(CODEC.encode_error(kind, f"llmproxy says {kind}")))
    with pytest.raises(error) as caught:
        client.embeddings.create(model="text-embedding-3-small", input="hi")
    assert f"llmproxy says {kind}" in str(caught.value)


def test_azure_deployment(loopback: LoopbackServer) -> None:
    """AzureOpenAI puts the deployment in the path; detection names it as the route's model."""
    mock = EmbeddingMock(CODEC, url_model=model_in_url("myres.openai.azure.com"))
    loopback.queue(mock)
    azure = AzureOpenAI(api_key="k", api_version="2024-10-21", azure_endpoint=loopback.url, max_retries=0)
    with azure:
        response = azure.embeddings.create(model="my-embedder", input=["a", "b"])
    path = loopback.received[0].path
    assert path == "/openai/deployments/my-embedder/embeddings?api-version=2024-10-21"
    assert loopback.received[0].headers["api-key"] == "k"
    assert from_sdk(response) == mock.expected
    assert mock.request.model == "my-embedder"
    route = detect("myres.openai.azure.com", path)
    assert route == Route(Provider.AZURE, Operation.EMBEDDINGS, False, "my-embedder")
    assert embedding_codec(route) is CODEC


def test_azure_v1_path(loopback: LoopbackServer) -> None:
    mock = EmbeddingMock(CODEC)
    loopback.queue(mock)
    with OpenAI(api_key="k", base_url=loopback.url + "/openai/v1/", max_retries=0) as sdk:
        response = sdk.embeddings.create(model="my-embedder", input="a")
    assert loopback.received[0].path == "/openai/v1/embeddings"
    assert from_sdk(response) == mock.expected
