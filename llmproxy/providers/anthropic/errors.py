"""Anthropic's error bodies (responses and in-stream `error` events) and rate-limit headers
(docs/providers.md#anthropic-messages)."""

from datetime import UTC, datetime, timedelta
from typing import Final

from llmproxy.model import ErrorKind, ProviderError
from llmproxy.providers.base import (
    ErrorReply,
    JsonObject,
    RateLimits,
    decode_error_body,
    dump_json,
    retry_after_headers,
    stable_id,
    status_kind,
)
from llmproxy.providers.node import Node

WHAT: Final = "anthropic error"

# kind → (HTTP status, error.type) as api.anthropic.com answers; each type names exactly one kind.
ERRORS: Final[dict[ErrorKind, tuple[int, str]]] = {
    ErrorKind.INVALID_REQUEST: (400, "invalid_request_error"),
    ErrorKind.AUTHENTICATION: (401, "authentication_error"),
    ErrorKind.QUOTA_EXCEEDED: (402, "billing_error"),
    ErrorKind.PERMISSION: (403, "permission_error"),
    ErrorKind.NOT_FOUND: (404, "not_found_error"),
    ErrorKind.REQUEST_TOO_LARGE: (413, "request_too_large"),
    ErrorKind.RATE_LIMIT: (429, "rate_limit_error"),
    ErrorKind.SERVER_ERROR: (500, "api_error"),
    ErrorKind.TIMEOUT: (504, "timeout_error"),
    ErrorKind.OVERLOADED: (529, "overloaded_error"),
}
_KINDS: Final[dict[str, ErrorKind]] = {type_: kind for kind, (_, type_) in ERRORS.items()}


def error_object(kind: ErrorKind, message: str) -> JsonObject:
    """The `{"type": "error", "error": {...}}` payload, as bodies and stream `error` events carry it."""
    return {"type": "error", "error": {"type": ERRORS[kind][1], "message": message}}


def visible_error(error: ProviderError) -> ProviderError:
    """What an in-stream error event carries: the kind's own type, and no HTTP status (the stream's is 200)."""
    return ProviderError(error.kind, error.message, ERRORS[error.kind][1], None)


def read_error(node: Node, status: int | None) -> ProviderError:
    """An error payload; the type decides the kind, else the status (streams have none: a server error)."""
    error = node["error"]
    type_ = error["type"].opt_string()
    fallback = ErrorKind.SERVER_ERROR if status is None else status_kind(status)
    kind = _KINDS.get(type_, fallback) if type_ is not None else fallback
    return ProviderError(kind, error["message"].opt_string() or "", type_, status)


def encode_error(kind: ErrorKind, message: str, *, retry_after: float | None = None) -> ErrorReply:
    status = ERRORS[kind][0]
    request_id = stable_id("req_", kind, message)
    body = {**error_object(kind, message), "request_id": request_id}
    headers = {"content-type": "application/json", "request-id": request_id, **retry_after_headers(retry_after)}
    return ErrorReply(status, headers, dump_json(body))


def decode_error(status: int, body: bytes) -> ProviderError:
    """Anthropic's error body; any other body (an HTML gateway page…) still gives a kind from the status."""
    return decode_error_body(read_error, WHAT, status, body)


def rate_limit_headers(limits: RateLimits, now: datetime) -> dict[str, str]:
    """`anthropic-ratelimit-*` headers with resets as RFC 3339 instants.

    Anthropic limits input and output tokens apart (`input-tokens-*`, `output-tokens-*`) and states in
    `tokens-*` the most restrictive of them. A state with one token bucket advertises it for all three; with
    separate buckets, `tokens-*` is the one with the fewest tokens left."""
    headers: dict[str, str] = {}
    single: _Bucket = (limits.tokens_limit, limits.tokens_remaining, limits.tokens_reset)
    input_: _Bucket = (limits.input_tokens_limit, limits.input_tokens_remaining, limits.input_tokens_reset)
    output: _Bucket = (limits.output_tokens_limit, limits.output_tokens_remaining, limits.output_tokens_reset)
    apart = [bucket for bucket in (input_, output) if bucket[0] is not None]
    tokens = single if single[0] is not None or not apart else min(apart, key=lambda bucket: bucket[1] or 0)
    input_bucket = input_ if input_[0] is not None else single
    output_bucket = output if output[0] is not None else single
    for unit, (limit, remaining, reset) in (
        ("requests", (limits.requests_limit, limits.requests_remaining, limits.requests_reset)),
        ("tokens", tokens),
        ("input-tokens", input_bucket),
        ("output-tokens", output_bucket),
    ):
        if limit is not None:
            headers[f"anthropic-ratelimit-{unit}-limit"] = str(limit)
        if remaining is not None:
            headers[f"anthropic-ratelimit-{unit}-remaining"] = str(remaining)
        if reset is not None:
            headers[f"anthropic-ratelimit-{unit}-reset"] = rfc3339(now, reset)
    headers.update(retry_after_headers(limits.retry_after))
    return headers


type _Bucket = tuple[int | None, int | None, float | None]


def rfc3339(now: datetime, seconds: float) -> str:
    """`now + seconds` in UTC, rounded up to a whole second so a client never retries early."""
    instant = (now if now.tzinfo else now.replace(tzinfo=UTC)).astimezone(UTC) + timedelta(seconds=seconds)
    if instant.microsecond:
        instant = instant.replace(microsecond=0) + timedelta(seconds=1)
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")
