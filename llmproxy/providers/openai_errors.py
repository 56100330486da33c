"""OpenAI's error bodies and rate-limit headers, shared by Chat Completions, Responses and embeddings."""

from datetime import datetime

from llmproxy.errors import ParseError
from llmproxy.model import ErrorKind, ProviderError
from llmproxy.providers.base import (
    ErrorReply,
    RateLimits,
    dump_json,
    retry_after_headers,
    status_kind,
    unreadable_error,
)
from llmproxy.providers.node import Node

# kind → (HTTP status, error.type, error.code), as api.openai.com answers.
_ERRORS: dict[ErrorKind, tuple[int, str, str | None]] = {
    ErrorKind.INVALID_REQUEST: (400, "invalid_request_error", None),
    ErrorKind.AUTHENTICATION: (401, "invalid_request_error", "invalid_api_key"),
    ErrorKind.PERMISSION: (403, "invalid_request_error", "unsupported_country_region_territory"),
    ErrorKind.NOT_FOUND: (404, "invalid_request_error", "model_not_found"),
    ErrorKind.REQUEST_TOO_LARGE: (413, "invalid_request_error", "request_too_large"),
    ErrorKind.RATE_LIMIT: (429, "requests", "rate_limit_exceeded"),
    ErrorKind.QUOTA_EXCEEDED: (429, "insufficient_quota", "insufficient_quota"),
    ErrorKind.SERVER_ERROR: (500, "server_error", None),
    ErrorKind.OVERLOADED: (503, "server_error", "server_overloaded"),
    ErrorKind.TIMEOUT: (504, "server_error", "timeout"),
}


def encode_error(kind: ErrorKind, message: str, *, retry_after: float | None = None) -> ErrorReply:
    status, type_, code = _ERRORS[kind]
    body = {"error": {"message": message, "type": type_, "param": None, "code": code}}
    headers = {"content-type": "application/json", **retry_after_headers(retry_after)}
    return ErrorReply(status, headers, dump_json(body))


def decode_error(status: int, body: bytes) -> ProviderError:
    """`{"error": {"message", "type", "code"}}`; any other body still yields a kind from the status."""
    kind = status_kind(status)
    try:
        error = Node.parse(body, "openai error")["error"]
        message = error["message"].opt_string()
        type_ = error["type"].opt_string()
        code = error["code"].opt_string() if error["code"].is_string() else None
    except ParseError:
        message = None
    if message is None:  # not OpenAI's shape (a gateway's own body, HTML…): keep the text
        return unreadable_error(status, body)
    if "insufficient_quota" in (type_, code):
        kind = ErrorKind.QUOTA_EXCEEDED
    return ProviderError(kind, message, type_ or code, status)


def rate_limit_headers(limits: RateLimits, now: datetime) -> dict[str, str]:
    """`x-ratelimit-{limit,remaining,reset}-{requests,tokens}`; resets as Go durations ("6m0s", "20ms")."""
    del now  # OpenAI states resets as durations, not instants
    headers: dict[str, str] = {}
    for unit, limit, remaining, reset in (
        ("requests", limits.requests_limit, limits.requests_remaining, limits.requests_reset),
        ("tokens", limits.tokens_limit, limits.tokens_remaining, limits.tokens_reset),
    ):
        if limit is not None:
            headers[f"x-ratelimit-limit-{unit}"] = str(limit)
        if remaining is not None:
            headers[f"x-ratelimit-remaining-{unit}"] = str(remaining)
        if reset is not None:
            headers[f"x-ratelimit-reset-{unit}"] = go_duration(reset)
    headers.update(retry_after_headers(limits.retry_after))
    return headers


def go_duration(seconds: float) -> str:
    """Seconds as Go's time.Duration prints them, to the millisecond: "0s", "20ms", "1.5s", "6m0s", "1h2m3s"."""
    millis = max(0, round(seconds * 1000))  # round once, so 59.9996 s is "1m0s", never "60s"
    if millis == 0:
        return "0s"
    if millis < 1000:
        return f"{millis}ms"
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    whole, fraction = divmod(rest, 1000)
    text = f"{whole}.{fraction:03d}".rstrip("0").rstrip(".") + "s"
    if hours:
        return f"{hours}h{minutes}m{text}"
    if minutes:
        return f"{minutes}m{text}"
    return text
