"""The official `google-genai` SDK parses what llmproxy's Gemini embeddings codec serves. On the Developer
API the SDK always calls `:batchEmbedContents`, for one content or several, under /v1/ or /v1beta/."""

import pytest

pytest.importorskip("google.genai", reason="google-genai >= 3.4 cannot install beside mitmproxy 12.2 on Python 3.12")

from google import genai
from google.genai import errors, types

from llmproxy.model import EmbeddingResult, ErrorKind, Usage
from llmproxy.providers.embeddings import GEMINI_EMBEDDINGS as CODEC
from tests.conformance.server import LoopbackServer
from tests.conformance.vector_mock import EmbeddingMock, error_reply, model_in_url

pytestmark = pytest.mark.conformance

HOST = "generativelanguage.googleapis.com"


def client(loopback: LoopbackServer, version: str = "v1beta") -> genai.Client:
    options = types.HttpOptions(base_url=loopback.url, api_version=version)
    return genai.Client(api_key="test-key", http_options=options)


def from_sdk(response: types.EmbedContentResponse) -> EmbeddingResult:
    usage = response.usage_metadata
    return EmbeddingResult(
        vectors=tuple(tuple(embedding.values or ()) for embedding in response.embeddings or ()),
        usage=None if usage is None else Usage(input_tokens=usage.prompt_token_count or 0),
    )


@pytest.mark.parametrize("version", ["v1", "v1beta"])
@pytest.mark.parametrize("contents", [["What is the meaning of life?"], ["one", "two 🚀", ""]])
def test_embed_content(loopback: LoopbackServer, version: str, contents: list[str]) -> None:
    mock = EmbeddingMock(CODEC, url_model=model_in_url(HOST))
    loopback.queue(mock)
    sdk = client(loopback, version)
    response = sdk.models.embed_content(model="gemini-embedding-001", contents=contents)  # type: ignore[arg-type]
    assert loopback.received[0].path == f"/{version}/models/gemini-embedding-001:batchEmbedContents"
    assert mock.request.inputs == tuple(contents)
    assert mock.request.model == "gemini-embedding-001"
    assert from_sdk(response) == mock.expected
    assert {len(v) for v in mock.expected.vectors} == {3072}


def test_single_string_and_config(loopback: LoopbackServer) -> None:
    mock = EmbeddingMock(CODEC, url_model=model_in_url(HOST))
    loopback.queue(mock)
    config = types.EmbedContentConfig(output_dimensionality=64, task_type="RETRIEVAL_QUERY")
    sdk = client(loopback)  # keep the client referenced: a dropped one closes its transport mid-call
    response = sdk.models.embed_content(model="text-embedding-004", contents="hello", config=config)
    assert (mock.request.dimensions, mock.request.input_type, mock.request.single) == (64, "RETRIEVAL_QUERY", False)
    assert from_sdk(response) == mock.expected
    assert len(mock.expected.vectors[0]) == 64


@pytest.mark.parametrize(
    ("kind", "error", "status"),
    [
        (ErrorKind.INVALID_REQUEST, errors.ClientError, "INVALID_ARGUMENT"),
        (ErrorKind.RATE_LIMIT, errors.ClientError, "RESOURCE_EXHAUSTED"),
        (ErrorKind.OVERLOADED, errors.ServerError, "UNAVAILABLE"),
    ],
)
def test_errors(loopback: LoopbackServer, kind: ErrorKind, error: type[errors.APIError], status: str) -> None:
    reply = CODEC.encode_error(kind, "llmproxy says no", retry_after=3)
    loopback.queue(error_reply(reply))
    sdk = client(loopback)
    with pytest.raises(error) as caught:
        sdk.models.embed_content(model="gemini-embedding-001", contents="hi")
    assert (caught.value.code, caught.value.status, caught.value.message) == (reply.status, status, "llmproxy says no")
