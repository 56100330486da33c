"""Bedrock error bodies, codes in every spelling, and the frames that end a stream."""

import json
from datetime import UTC, datetime
from uuid import UUID

import pytest

from llmproxy.framing.eventstream import decode_all, encode_event
from llmproxy.model import ErrorKind, ProviderError
from llmproxy.providers.base import RateLimits
from llmproxy.providers.bedrock import errors

WHAT = "test"


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", "ThrottlingException"),
        ("com.amazon.coral.service#AccessDeniedException", "AccessDeniedException"),
        ("modelStreamErrorException", "ModelStreamErrorException"),
    ],
)
def test_error_code_spellings(raw: str, code: str) -> None:
    assert errors.error_code(raw) == code


def test_encode_error_names_the_code_in_header_and_body() -> None:
    reply = errors.encode_error(ErrorKind.RATE_LIMIT, "Too many requests", retry_after=1.5)
    assert reply.status == 429
    assert reply.headers["x-amzn-errortype"] == "ThrottlingException"
    assert reply.headers["retry-after-ms"] == "1500"
    assert json.loads(reply.body) == {"message": "Too many requests", "__type": "ThrottlingException"}
    assert UUID(reply.headers["x-amzn-requestid"])  # AWS request ids are UUIDs; ours are deterministic
    assert reply.headers == errors.encode_error(ErrorKind.RATE_LIMIT, "Too many requests", retry_after=1.5).headers


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, b'{"message":"bad","__type":"ValidationException"}', ErrorKind.INVALID_REQUEST),
        (413, b'{"message":"big","__type":"ValidationException"}', ErrorKind.REQUEST_TOO_LARGE),
        (429, b'{"Message":"wait","code":"ModelNotReadyException"}', ErrorKind.OVERLOADED),
        (403, b'{"message":"The security token included in the request is invalid."}', ErrorKind.PERMISSION),
        (502, b"<html>Bad Gateway</html>", ErrorKind.SERVER_ERROR),
    ],
)
def test_decode_error(status: int, body: bytes, expected: ErrorKind) -> None:
    error = errors.decode_error(status, body)
    assert (error.kind, error.status) == (expected, status)


def test_a_stream_member_is_an_exception_frame_and_others_an_error_frame() -> None:
    (exception,) = decode_all(
        [errors.failure_frame(ProviderError(ErrorKind.RATE_LIMIT, "slow"), errors.CONVERSE_STREAM_EXCEPTIONS)]
    )
    assert exception.string(":message-type") == "exception"
    assert exception.string(":exception-type") == "throttlingException"
    assert json.loads(exception.payload) == {"message": "slow"}
    (error,) = decode_all(
        [errors.failure_frame(ProviderError(ErrorKind.TIMEOUT, "late"), errors.CONVERSE_STREAM_EXCEPTIONS)]
    )
    assert (error.string(":message-type"), error.string(":error-code")) == ("error", "ModelTimeoutException")
    (timeout,) = decode_all(
        [errors.failure_frame(ProviderError(ErrorKind.TIMEOUT, "late"), errors.INVOKE_STREAM_EXCEPTIONS)]
    )
    assert timeout.string(":exception-type") == "modelTimeoutException"
    for frame in (exception, error, timeout):
        failure = errors.read_failure(frame, WHAT)
        assert failure is not None
        assert failure.status is None


def test_model_stream_errors_read_as_server_errors() -> None:
    headers = {":message-type": "exception", ":exception-type": "modelStreamErrorException"}
    payload = b'{"message":"boom","originalStatusCode":500,"originalMessage":"x"}'
    (frame,) = decode_all([encode_event(headers, payload)])
    assert errors.read_failure(frame, WHAT) == ProviderError(
        ErrorKind.SERVER_ERROR, "boom", "ModelStreamErrorException"
    )
    (event,) = decode_all([encode_event({":message-type": "event", ":event-type": "chunk"})])
    assert errors.read_failure(event, WHAT) is None


def test_rate_limit_headers_are_only_a_retry_hint() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert errors.rate_limit_headers(RateLimits(requests_limit=5, retry_after=2), now) == {
        "retry-after": "2",
        "retry-after-ms": "2000",
        "x-amz-retry-after": "2000",  # botocore's standard retry mode waits at least this many milliseconds
    }
