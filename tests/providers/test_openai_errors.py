"""OpenAI error bodies, their decoding, and rate-limit headers (shared by Chat Completions and Responses)."""

import json
from datetime import UTC, datetime

import pytest

from llmproxy.model import ErrorKind, ProviderError
from llmproxy.providers.base import RateLimits
from llmproxy.providers.openai_errors import decode_error, encode_error, go_duration, rate_limit_headers

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("kind", "status", "type_", "code"),
    [
        (ErrorKind.INVALID_REQUEST, 400, "invalid_request_error", None),
        (ErrorKind.AUTHENTICATION, 401, "invalid_request_error", "invalid_api_key"),
        (ErrorKind.PERMISSION, 403, "invalid_request_error", "unsupported_country_region_territory"),
        (ErrorKind.NOT_FOUND, 404, "invalid_request_error", "model_not_found"),
        (ErrorKind.REQUEST_TOO_LARGE, 413, "invalid_request_error", "request_too_large"),
        (ErrorKind.RATE_LIMIT, 429, "requests", "rate_limit_exceeded"),
        (ErrorKind.QUOTA_EXCEEDED, 429, "insufficient_quota", "insufficient_quota"),
        (ErrorKind.SERVER_ERROR, 500, "server_error", None),
        (ErrorKind.OVERLOADED, 503, "server_error", "server_overloaded"),
        (ErrorKind.TIMEOUT, 504, "server_error", "timeout"),
    ],
)
def test_error_body_per_kind_and_back(kind: ErrorKind, status: int, type_: str, code: str | None) -> None:
    reply = encode_error(kind, "Something went wrong.")
    assert reply.status == status
    assert reply.headers == {"content-type": "application/json"}
    assert json.loads(reply.body) == {
        "error": {"message": "Something went wrong.", "type": type_, "param": None, "code": code}
    }
    assert decode_error(reply.status, reply.body) == ProviderError(kind, "Something went wrong.", type_, status)


def test_every_kind_has_a_body() -> None:
    assert {encode_error(kind, "m").status for kind in ErrorKind} >= {400, 401, 403, 404, 429, 500}


@pytest.mark.parametrize(
    ("retry_after", "seconds", "millis"), [(0.05, "1", "50"), (2, "2", "2000"), (1.2, "2", "1200")]
)
def test_retry_hints(retry_after: float, seconds: str, millis: str) -> None:
    headers = encode_error(ErrorKind.RATE_LIMIT, "slow down", retry_after=retry_after).headers
    assert headers["retry-after"] == seconds
    assert headers["retry-after-ms"] == millis


def test_decode_prefers_type_then_code_and_spots_quota() -> None:
    body = b'{"error":{"message":"You exceeded your current quota","type":"tokens","code":"insufficient_quota"}}'
    assert decode_error(429, body) == ProviderError(
        ErrorKind.QUOTA_EXCEEDED, "You exceeded your current quota", "tokens", 429
    )
    untyped = b'{"error":{"message":"m","type":null,"code":"rate_limit_exceeded"}}'
    assert decode_error(429, untyped) == ProviderError(ErrorKind.RATE_LIMIT, "m", "rate_limit_exceeded", 429)
    numeric_code = b'{"error":{"message":"m","type":"invalid_request_error","code":400}}'
    assert decode_error(400, numeric_code).type == "invalid_request_error"


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (502, b"<html>Bad gateway</html>", ErrorKind.SERVER_ERROR),
        (503, b"upstream connect error", ErrorKind.OVERLOADED),
        (401, b'{"error":"plain string"}', ErrorKind.AUTHENTICATION),
        (429, b"\xff\xfe not utf-8", ErrorKind.RATE_LIMIT),
        (418, b"[1, 2]", ErrorKind.INVALID_REQUEST),
        (422, b'{"detail": "gateway says no"}', ErrorKind.INVALID_REQUEST),
    ],
)
def test_bodies_that_are_not_openai_shaped_keep_their_text(status: int, body: bytes, kind: ErrorKind) -> None:
    decoded = decode_error(status, body)
    assert decoded == ProviderError(kind, body.decode("utf-8", "replace"), None, status)


GO_DURATIONS = [
    (0, "0s"),
    (0.0004, "0s"),
    (0.02, "20ms"),
    (0.9996, "1s"),
    (59.9996, "1m0s"),
    (3599.9999, "1h0m0s"),
    (0.5, "500ms"),
    (1, "1s"),
    (1.5, "1.5s"),
    (17.25, "17.25s"),
    (60, "1m0s"),
    (61.5, "1m1.5s"),
    (360, "6m0s"),
    (3600, "1h0m0s"),
    (3723, "1h2m3s"),
]


@pytest.mark.parametrize(("seconds", "text"), GO_DURATIONS)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def test_rate_limit_headers() -> None:
    limits = RateLimits(
        requests_limit=500,
        requests_remaining=499,
        requests_reset=0.12,
        tokens_limit=30000,
        tokens_remaining=29000,
        tokens_reset=360,
        retry_after=1.5,
    )
    assert rate_limit_headers(limits, NOW) == {
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "499",
        "x-ratelimit-reset-requests": "120ms",
        "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-remaining-tokens": "29000",
        "x-ratelimit-reset-tokens": "6m0s",
        "retry-after": "2",
        "retry-after-ms": "1500",
    }


def test_rate_limit_headers_only_for_what_is_known() -> None:
    assert rate_limit_headers(RateLimits(tokens_remaining=0), NOW) == {"x-ratelimit-remaining-tokens": "0"}
    assert rate_limit_headers(RateLimits(), NOW) == {}
