"""Anthropic error replies and rate-limit headers (docs/providers.md#anthropic-messages)."""

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from llmproxy.model import ErrorKind, ProviderError
from llmproxy.providers.anthropic import MESSAGES
from llmproxy.providers.base import RateLimits

TABLE = [
    (ErrorKind.INVALID_REQUEST, 400, "invalid_request_error"),
    (ErrorKind.AUTHENTICATION, 401, "authentication_error"),
    (ErrorKind.QUOTA_EXCEEDED, 402, "billing_error"),
    (ErrorKind.PERMISSION, 403, "permission_error"),
    (ErrorKind.NOT_FOUND, 404, "not_found_error"),
    (ErrorKind.REQUEST_TOO_LARGE, 413, "request_too_large"),
    (ErrorKind.RATE_LIMIT, 429, "rate_limit_error"),
    (ErrorKind.SERVER_ERROR, 500, "api_error"),
    (ErrorKind.TIMEOUT, 504, "timeout_error"),
    (ErrorKind.OVERLOADED, 529, "overloaded_error"),
]


@pytest.mark.parametrize(("kind", "status", "type_"), TABLE)
def test_error_replies(kind: ErrorKind, status: int, type_: str) -> None:
    reply = MESSAGES.encode_error(kind, "went wrong")
    body = json.loads(reply.body)
    assert reply.status == status
    assert body["type"] == "error"
    assert body["error"] == {"type": type_, "message": "went wrong"}
    assert body["request_id"].startswith("req_")
    assert reply.headers == {"content-type": "application/json", "request-id": body["request_id"]}
    assert MESSAGES.decode_error(status, reply.body) == ProviderError(kind, "went wrong", type_, status)


def test_request_ids_are_stable_and_distinct() -> None:
    first = MESSAGES.encode_error(ErrorKind.RATE_LIMIT, "a").headers["request-id"]
    assert first == MESSAGES.encode_error(ErrorKind.RATE_LIMIT, "a").headers["request-id"]
    assert first != MESSAGES.encode_error(ErrorKind.RATE_LIMIT, "b").headers["request-id"]


def test_retry_hints() -> None:
    reply = MESSAGES.encode_error(ErrorKind.RATE_LIMIT, "slow down", retry_after=1.25)
    assert reply.headers["retry-after"] == "2"
    assert reply.headers["retry-after-ms"] == "1250"


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            502,
            b"<html>Bad Gateway</html>",
            ProviderError(ErrorKind.SERVER_ERROR, "<html>Bad Gateway</html>", None, 502),
        ),
        (429, b"\xff\xfe", ProviderError(ErrorKind.RATE_LIMIT, "\ufffd\ufffd", None, 429)),
        (503, b'{"error": "nope"}', ProviderError(ErrorKind.OVERLOADED, '{"error": "nope"}', None, 503)),
        (
            400,
            b'{"type":"error","error":{"type":"invalid_request_error"}}',
            ProviderError(ErrorKind.INVALID_REQUEST, "", "invalid_request_error", 400),
        ),
        # an unknown type falls back to the status
        (
            409,
            b'{"type":"error","error":{"type":"conflict_error","message":"busy"}}',
            ProviderError(ErrorKind.INVALID_REQUEST, "busy", "conflict_error", 409),
        ),
        # the type wins over the status
        (
            500,
            b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
            ProviderError(ErrorKind.OVERLOADED, "Overloaded", "overloaded_error", 500),
        ),
    ],
)
def test_decode_error_any_body(status: int, body: bytes, expected: ProviderError) -> None:
    assert MESSAGES.decode_error(status, body) == expected


NOW = datetime(2025, 8, 21, 12, 40, 0, tzinfo=UTC)


def test_rate_limit_headers() -> None:
    limits = RateLimits(
        requests_limit=50,
        requests_remaining=49,
        requests_reset=59,
        tokens_limit=80000,
        tokens_remaining=0,
        tokens_reset=0.2,
        retry_after=0.5,
    )
    assert MESSAGES.rate_limit_headers(limits, NOW) == {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "49",
        "anthropic-ratelimit-requests-reset": "2025-08-21T12:40:59Z",
        "anthropic-ratelimit-tokens-limit": "80000",
        "anthropic-ratelimit-tokens-remaining": "0",
        "anthropic-ratelimit-tokens-reset": "2025-08-21T12:40:01Z",  # rounded up, never early
        "anthropic-ratelimit-input-tokens-limit": "80000",
        "anthropic-ratelimit-input-tokens-remaining": "0",
        "anthropic-ratelimit-input-tokens-reset": "2025-08-21T12:40:01Z",
        "anthropic-ratelimit-output-tokens-limit": "80000",
        "anthropic-ratelimit-output-tokens-remaining": "0",
        "anthropic-ratelimit-output-tokens-reset": "2025-08-21T12:40:01Z",
        "retry-after": "1",
        "retry-after-ms": "500",
    }


def test_rate_limit_resets_are_utc_whatever_the_clock_zone() -> None:
    local = NOW.astimezone(timezone(timedelta(hours=-7)))
    naive = NOW.replace(tzinfo=None)  # naive clocks are taken as UTC
    for now in (local, naive):
        headers = MESSAGES.rate_limit_headers(RateLimits(requests_reset=3600), now)
        assert headers == {"anthropic-ratelimit-requests-reset": "2025-08-21T13:40:00Z"}


def test_no_limits_no_headers() -> None:
    assert MESSAGES.rate_limit_headers(RateLimits(), NOW) == {}


def test_input_and_output_token_limits_apart_with_tokens_the_tighter() -> None:
    limits = RateLimits(
        input_tokens_limit=30000,
        input_tokens_remaining=29000,
        input_tokens_reset=60,
        output_tokens_limit=8000,
        output_tokens_remaining=500,
        output_tokens_reset=30,
    )
    assert MESSAGES.rate_limit_headers(limits, NOW) == {
        "anthropic-ratelimit-tokens-limit": "8000",
        "anthropic-ratelimit-tokens-remaining": "500",
        "anthropic-ratelimit-tokens-reset": "2025-08-21T12:40:30Z",
        "anthropic-ratelimit-input-tokens-limit": "30000",
        "anthropic-ratelimit-input-tokens-remaining": "29000",
        "anthropic-ratelimit-input-tokens-reset": "2025-08-21T12:41:00Z",
        "anthropic-ratelimit-output-tokens-limit": "8000",
        "anthropic-ratelimit-output-tokens-remaining": "500",
        "anthropic-ratelimit-output-tokens-reset": "2025-08-21T12:40:30Z",
    }
