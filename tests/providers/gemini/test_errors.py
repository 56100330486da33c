"""Google's error bodies for every kind, decoding real and foreign error bodies, and rate-limit headers."""

import json
from datetime import UTC, datetime

import pytest

from llmproxy.model import ErrorKind, ProviderError
from llmproxy.providers.base import RateLimits
from llmproxy.providers.gemini import GENERATE


def test_rate_limit_body_as_the_api_sends_it() -> None:
    reply = GENERATE.encode_error(ErrorKind.RATE_LIMIT, "Resource has been exhausted.", retry_after=7.25)
    assert reply.status == 429
    assert "retry-after" not in reply.headers  # Google says it in the body only
    assert json.loads(reply.body) == {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel",
                        }
                    ],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7.25s"},
            ],
        }
    }


@pytest.mark.parametrize(
    ("kind", "status", "text"),
    [
        (ErrorKind.INVALID_REQUEST, 400, "INVALID_ARGUMENT"),
        (ErrorKind.AUTHENTICATION, 401, "UNAUTHENTICATED"),
        (ErrorKind.PERMISSION, 403, "PERMISSION_DENIED"),
        (ErrorKind.NOT_FOUND, 404, "NOT_FOUND"),
        (ErrorKind.REQUEST_TOO_LARGE, 413, "INVALID_ARGUMENT"),
        (ErrorKind.RATE_LIMIT, 429, "RESOURCE_EXHAUSTED"),
        (ErrorKind.QUOTA_EXCEEDED, 429, "RESOURCE_EXHAUSTED"),
        (ErrorKind.SERVER_ERROR, 500, "INTERNAL"),
        (ErrorKind.OVERLOADED, 503, "UNAVAILABLE"),
        (ErrorKind.TIMEOUT, 504, "DEADLINE_EXCEEDED"),
    ],
)
def test_every_kind(kind: ErrorKind, status: int, text: str) -> None:
    reply = GENERATE.encode_error(kind, "m")
    assert (reply.status, json.loads(reply.body)["error"]["status"]) == (status, text)
    assert GENERATE.decode_error(reply.status, reply.body) == ProviderError(kind, "m", text, status)


def test_a_per_day_quota_is_an_exhausted_quota() -> None:
    """The real free-tier answer: the quota id says whether waiting a minute helps."""
    body = {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
                },
                {"@type": "type.googleapis.com/google.rpc.Help", "links": []},
            ],
        }
    }
    assert GENERATE.decode_error(429, json.dumps(body).encode()).kind is ErrorKind.QUOTA_EXCEEDED


def test_foreign_and_array_bodies() -> None:
    html = GENERATE.decode_error(502, b"<html>Bad Gateway</html>")
    assert html == ProviderError(ErrorKind.SERVER_ERROR, "<html>Bad Gateway</html>", None, 502)
    array = b'[{"error": {"code": 400, "message": "bad", "status": "FAILED_PRECONDITION"}}]'
    assert GENERATE.decode_error(400, array) == ProviderError(
        ErrorKind.INVALID_REQUEST, "bad", "FAILED_PRECONDITION", 400
    )
    unknown = b'{"error": {"code": 409, "message": "x", "status": "ABORTED"}}'
    assert GENERATE.decode_error(409, unknown).kind is ErrorKind.INVALID_REQUEST  # by status code


def test_no_rate_limit_headers() -> None:
    limits = RateLimits(requests_limit=10, requests_remaining=0, requests_reset=5, retry_after=5)
    assert GENERATE.rate_limit_headers(limits, datetime(2026, 1, 1, tzinfo=UTC)) == {}
