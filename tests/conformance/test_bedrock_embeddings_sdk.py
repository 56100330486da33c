"""boto3's `bedrock-runtime` `invoke_model` accepts what llmproxy's Bedrock embedding codecs serve for Titan
and Cohere embedding models (the body is the model's own JSON), and raises the modelled exceptions for
errors. The codec is chosen by model id from the URL, as `bedrock_embedding_codec` does."""

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import boto3
import pytest
from botocore.config import Config

from llmproxy.model import ErrorKind
from llmproxy.providers.embeddings import BEDROCK_TITAN_EMBEDDINGS, bedrock_embedding_codec
from llmproxy.providers.vectors import EmbeddingCodec
from tests.conformance.server import LoopbackServer
from tests.conformance.vector_mock import EmbeddingMock, error_reply

pytestmark = pytest.mark.conformance


@pytest.fixture
def bedrock(loopback: LoopbackServer) -> Iterator[Any]:
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=loopback.url,
        aws_access_key_id="x",
        aws_secret_access_key="y",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )
    yield client
    client.close()


def model_id(path: str) -> str:
    """`/model/{id}/invoke`, the id URL-encoded by botocore."""
    return unquote(path.split("/")[2])


def codec_for(model: str) -> EmbeddingCodec:
    codec = bedrock_embedding_codec(model)
    assert codec is not None
    return codec


@pytest.mark.parametrize(
    ("model", "body", "size"),
    [
        ("amazon.titan-embed-text-v2:0", {"inputText": "hello world", "dimensions": 256, "normalize": True}, 256),
        ("amazon.titan-embed-text-v2:0", {"inputText": "hi", "embeddingTypes": ["float"]}, 1024),
        ("amazon.titan-embed-text-v1", {"inputText": "Tōkyō 🚀"}, 1536),
        ("cohere.embed-english-v3", {"texts": ["a", "b"], "input_type": "search_document"}, 1024),
        ("us.cohere.embed-v4:0", {"texts": ["a"], "input_type": "search_query", "embedding_types": ["float"]}, 1536),
    ],
)
def test_invoke_model(loopback: LoopbackServer, bedrock: Any, model: str, body: dict[str, Any], size: int) -> None:
    mock = EmbeddingMock(codec_for(model), url_model=model_id)
    loopback.queue(mock)
    response = bedrock.invoke_model(modelId=model, body=json.dumps(body), contentType="application/json")
    assert model_id(loopback.received[0].path) == model
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 200
    raw = response["body"].read()
    assert mock.codec.decode_response(raw) == mock.expected
    answer = json.loads(raw)
    vectors = [answer["embedding"]] if "embedding" in answer else answer["embeddings"]
    vectors = vectors["float"] if isinstance(vectors, dict) else vectors
    assert {len(v) for v in vectors} == {size}


@pytest.mark.parametrize(
    ("kind", "code"),
    [(ErrorKind.RATE_LIMIT, "ThrottlingException"), (ErrorKind.INVALID_REQUEST, "ValidationException")],
)
def test_errors(loopback: LoopbackServer, bedrock: Any, kind: ErrorKind, code: str) -> None:
    loopback.queue(error_reply(BEDROCK_TITAN_EMBEDDINGS.encode_error(kind, "llmproxy says no")))
    with pytest.raises(getattr(bedrock.exceptions, code)) as caught:
        bedrock.invoke_model(modelId="amazon.titan-embed-text-v2:0", body=json.dumps({"inputText": "x"}))
    assert caught.value.response["Error"] == {"Code": code, "Message": "llmproxy says no"}


def test_not_an_embedding_model() -> None:
    assert bedrock_embedding_codec("anthropic.claude-3-haiku-20240307-v1:0") is None
