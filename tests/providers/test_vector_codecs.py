"""Embedding and rerank codecs: what the golden cases and properties do not pin down — precise ParseError
messages, tolerant reading of real answers, and the error bodies each provider sends."""

import json

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import EmbeddingRequest, EmbeddingResult, ErrorKind, ProviderError, Usage
from llmproxy.providers.embeddings import (
    BEDROCK_TITAN_EMBEDDINGS,
    COHERE_EMBEDDINGS,
    GEMINI_EMBEDDINGS,
    OLLAMA_EMBEDDINGS,
    OPENAI_EMBEDDINGS,
    VOYAGE_EMBEDDINGS,
)
from llmproxy.providers.rerank import COHERE_RERANK, VOYAGE_RERANK
from llmproxy.providers.vectors import EmbeddingCodec


def dump(value: object) -> bytes:
    return json.dumps(value).encode()


@pytest.mark.parametrize(
    ("codec", "body", "message"),
    [
        (OPENAI_EMBEDDINGS, {"input": 3}, "openai embeddings: $.input: expected a string, a list of strings"),
        (OPENAI_EMBEDDINGS, {"input": [1, "a"]}, "openai embeddings: $.input[1]: expected an integer"),
        (OPENAI_EMBEDDINGS, {"input": ["a", [1, None]]}, "openai embeddings: $.input[1][1]: expected an integer"),
        (OPENAI_EMBEDDINGS, {"input": "a", "dimensions": "3"}, "openai embeddings: $.dimensions: expected an integer"),
        (
            GEMINI_EMBEDDINGS,
            {"requests": [{"content": {"parts": [{"text": 1}]}}]},
            "$.requests[0].content.parts[0].text",
        ),
        (GEMINI_EMBEDDINGS, {"content": {"parts": "hi"}}, "gemini embeddings: $.content.parts: expected a list"),
        (OLLAMA_EMBEDDINGS, {"model": "m", "input": [1]}, "ollama embeddings: $.input[0]: expected a string"),
        (BEDROCK_TITAN_EMBEDDINGS, {"inputText": ["a"]}, "bedrock titan embeddings: $.inputText: expected a string"),
        (
            COHERE_EMBEDDINGS,
            {"texts": ["a"], "embedding_types": "float"},
            "cohere embed: $.embedding_types: expected a list",
        ),
        (COHERE_EMBEDDINGS, {"inputs": [{"content": [{"type": 2}]}]}, "cohere embed: $.inputs[0].content[0].type"),
        (VOYAGE_EMBEDDINGS, {"input": None, "model": "v"}, "voyage embeddings: $.input: expected a string or a list"),
    ],
)
def test_bad_requests_name_the_field(codec: EmbeddingCodec, body: object, message: str) -> None:
    with pytest.raises(ParseError, match=message.replace("$", r"\$").replace("[", r"\[").replace("]", r"\]")):
        codec.decode_request(dump(body))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"data": [{"index": 0, "embedding": "not base64!"}]}, "$.data[0].embedding: expected base64 of float32"),
        ({"data": [{"index": 0, "embedding": "AAA="}]}, "$.data[0].embedding: expected base64 of float32 values (a"),
        ({"data": [{"index": 0, "embedding": "AADAfw=="}]}, "$.data[0].embedding: expected base64 of finite"),  # NaN
        ({"data": [{"index": 0, "embedding": [1, True]}]}, "$.data[0].embedding[1]: expected a number"),
        ({"data": [{"index": 1, "embedding": []}]}, "$.data: expected indexes 0 to 0"),
        (
            {"data": [{"index": 0, "embedding": []}, {"index": 0, "embedding": []}]},
            "$.data[1].index: expected an index",
        ),
    ],
)
def test_bad_openai_answers_name_the_field(body: object, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        OPENAI_EMBEDDINGS.decode_response(dump(body))
    assert str(caught.value).startswith("openai embeddings: " + message)


def test_answers_are_read_in_index_order() -> None:
    body = {"data": [{"index": 1, "embedding": [2.0]}, {"index": 0, "embedding": [1]}], "model": "m"}
    assert OPENAI_EMBEDDINGS.decode_response(dump(body)) == EmbeddingResult(((1.0,), (2.0,)), "m")


def test_gemini_reads_both_answers_and_both_spellings() -> None:
    single = {"embedding": {"values": [0.5]}}
    batch = {"embeddings": [{"values": [1]}, {"values": []}], "usage_metadata": {"prompt_token_count": 3}}
    assert GEMINI_EMBEDDINGS.decode_response(dump(single)) == EmbeddingResult(((0.5,),))
    assert GEMINI_EMBEDDINGS.decode_response(dump(batch)) == EmbeddingResult(((1.0,), ()), usage=Usage(3))


def test_cohere_reads_quantised_answers() -> None:
    body = {"id": "e", "embeddings": {"uint8": [[255, 128, 1]]}, "response_type": "embeddings_by_type"}
    assert COHERE_EMBEDDINGS.decode_response(dump(body)).vectors == ((1.0, 0.0, -1.0),)


def test_cohere_asked_only_for_unproduced_types_gets_floats() -> None:
    request = EmbeddingRequest("embed-v4.0", ("a",), encodings=("binary",))
    body = json.loads(COHERE_EMBEDDINGS.encode_response(EmbeddingResult(((0.5,),)), request))
    assert body["embeddings"] == {"float": [[0.5]]}


def test_titan_reads_embeddings_by_type_alone() -> None:
    body = {"embeddingsByType": {"float": [0.25]}, "inputTextTokenCount": 2}
    assert BEDROCK_TITAN_EMBEDDINGS.decode_response(dump(body)) == EmbeddingResult(((0.25,),), usage=Usage(2))


@pytest.mark.parametrize(
    ("codec", "status", "body"),
    [
        (COHERE_EMBEDDINGS, 429, {"message": "slow down"}),
        (COHERE_RERANK, 429, {"message": "slow down"}),
        (VOYAGE_EMBEDDINGS, 429, {"detail": "slow down"}),
        (VOYAGE_RERANK, 429, {"detail": "slow down"}),
        (OLLAMA_EMBEDDINGS, 429, {"error": "slow down"}),
    ],
)
def test_error_bodies(codec: EmbeddingCodec, status: int, body: object) -> None:
    """Flat bodies; Gemini's and Bedrock's embeddings share their chat codecs' errors, tested there."""
    reply = codec.encode_error(ErrorKind.RATE_LIMIT, "slow down", retry_after=1.5)
    assert (reply.status, json.loads(reply.body)) == (status, body)
    assert (reply.headers["retry-after"], reply.headers["retry-after-ms"]) == ("2", "1500")
    assert codec.decode_error(status, reply.body).kind is ErrorKind.RATE_LIMIT


def test_foreign_error_bodies_keep_their_text() -> None:
    assert COHERE_EMBEDDINGS.decode_error(502, b"<html>bad gateway</html>") == ProviderError(
        ErrorKind.SERVER_ERROR, "<html>bad gateway</html>", None, 502
    )
