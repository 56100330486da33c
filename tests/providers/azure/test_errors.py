"""Azure's own error bodies decode through OpenAI's reader to the kind they were made from."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.model import ErrorKind
from llmproxy.providers import azure, openai_errors
from tests.providers.strategies import texts


@given(kind=st.sampled_from(ErrorKind), message=texts, retry_after=st.none() | st.floats(0, 10**6))
def test_every_kind_round_trips(kind: ErrorKind, message: str, retry_after: float | None) -> None:
    reply = azure.errors.encode_error(kind, message, retry_after=retry_after)
    error = azure.CHAT.decode_error(reply.status, reply.body)
    assert (error.kind, error.message, error.status) == (kind, message, reply.status)
    assert reply.headers["apim-request-id"] == reply.headers["x-request-id"]
    assert ("retry-after-ms" in reply.headers) is (retry_after is not None)


@pytest.mark.parametrize(
    ("kind", "status", "code"),
    [
        (ErrorKind.AUTHENTICATION, 401, "401"),
        (ErrorKind.PERMISSION, 403, "PermissionDenied"),
        (ErrorKind.NOT_FOUND, 404, "DeploymentNotFound"),
        (ErrorKind.RATE_LIMIT, 429, "429"),
    ],
)
def test_azure_words_its_own_failures(kind: ErrorKind, status: int, code: str) -> None:
    reply = azure.errors.encode_error(kind, "nope")
    assert reply.status == status
    assert json.loads(reply.body) == {"error": {"code": code, "message": "nope"}}


def test_validation_and_server_errors_are_openais() -> None:
    for kind in (ErrorKind.INVALID_REQUEST, ErrorKind.SERVER_ERROR, ErrorKind.OVERLOADED):
        assert azure.errors.encode_error(kind, "x").body == openai_errors.encode_error(kind, "x").body


def test_content_filter_error() -> None:
    reply = azure.errors.content_filter_error("filtered", ("hate", "violence"))
    error = json.loads(reply.body)["error"]
    assert (reply.status, error["code"], error["param"]) == (400, "content_filter", "prompt")
    results = error["innererror"]["content_filter_result"]
    assert {name for name, result in results.items() if result["filtered"]} == {"hate", "violence"}
    assert azure.CHAT.decode_error(reply.status, reply.body).kind is ErrorKind.INVALID_REQUEST
