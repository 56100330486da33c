"""Google's error body (`google.rpc.Status` as JSON, docs/providers.md#gemini) and Gemini's rate-limit headers.

`{"error": {"code": 429, "message": "…", "status": "RESOURCE_EXHAUSTED", "details": [...]}}` for every
kind, in HTTP responses and as an in-stream chunk alike (google-genai raises on a chunk that starts with
`{"error":`). Kinds are told apart by status code, then by the status string, then by the quota that ran
out: a per-minute quota is a rate limit, a per-day one an exhausted quota (the Gemini CLI draws the same
line between retryable and terminal quota errors). A delay travels as `google.rpc.RetryInfo.retryDelay`.
"""

from datetime import datetime
from typing import Final

from llmproxy.model import ErrorKind, ProviderError
from llmproxy.providers.base import ErrorReply, JsonObject, RateLimits, decode_error_body, dump_json, status_kind
from llmproxy.providers.node import Node

WHAT: Final = "gemini error"
_TYPE: Final = "type.googleapis.com/google.rpc."

ERRORS: Final[dict[ErrorKind, tuple[int, str]]] = {
    ErrorKind.INVALID_REQUEST: (400, "INVALID_ARGUMENT"),
    ErrorKind.AUTHENTICATION: (401, "UNAUTHENTICATED"),
    ErrorKind.PERMISSION: (403, "PERMISSION_DENIED"),
    ErrorKind.NOT_FOUND: (404, "NOT_FOUND"),
    ErrorKind.REQUEST_TOO_LARGE: (413, "INVALID_ARGUMENT"),  # Google's front end answers 413 to huge bodies
    ErrorKind.RATE_LIMIT: (429, "RESOURCE_EXHAUSTED"),
    ErrorKind.QUOTA_EXCEEDED: (429, "RESOURCE_EXHAUSTED"),
    ErrorKind.SERVER_ERROR: (500, "INTERNAL"),
    ErrorKind.OVERLOADED: (503, "UNAVAILABLE"),
    ErrorKind.TIMEOUT: (504, "DEADLINE_EXCEEDED"),
}
_QUOTA_IDS: Final = {
    ErrorKind.RATE_LIMIT: "GenerateRequestsPerMinutePerProjectPerModel",
    ErrorKind.QUOTA_EXCEEDED: "GenerateRequestsPerDayPerProjectPerModel",
}
_BY_STATUS: Final[dict[str, ErrorKind]] = {
    "INVALID_ARGUMENT": ErrorKind.INVALID_REQUEST,
    "FAILED_PRECONDITION": ErrorKind.INVALID_REQUEST,
    "OUT_OF_RANGE": ErrorKind.INVALID_REQUEST,
    "UNAUTHENTICATED": ErrorKind.AUTHENTICATION,
    "PERMISSION_DENIED": ErrorKind.PERMISSION,
    "NOT_FOUND": ErrorKind.NOT_FOUND,
    "RESOURCE_EXHAUSTED": ErrorKind.RATE_LIMIT,
    "INTERNAL": ErrorKind.SERVER_ERROR,
    "UNKNOWN": ErrorKind.SERVER_ERROR,
    "UNAVAILABLE": ErrorKind.OVERLOADED,
    "DEADLINE_EXCEEDED": ErrorKind.TIMEOUT,
}


def retry_delay(seconds: float) -> str:
    """A proto-JSON Duration ("7s", "0.5s"), at millisecond precision."""
    return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"


def error_object(kind: ErrorKind, message: str, retry_after: float | None = None) -> JsonObject:
    """The `{"error": {...}}` body; a rate or quota error names its quota, and a delay rides in RetryInfo."""
    code, status = ERRORS[kind]
    details: list[JsonObject] = []
    if kind in _QUOTA_IDS:
        violation = {"quotaMetric": "generativelanguage.googleapis.com/generate_content_requests"}
        details.append({"@type": _TYPE + "QuotaFailure", "violations": [{**violation, "quotaId": _QUOTA_IDS[kind]}]})
    if retry_after is not None:
        details.append({"@type": _TYPE + "RetryInfo", "retryDelay": retry_delay(retry_after)})
    error: JsonObject = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = details
    return {"error": error}


def visible_error(error: ProviderError) -> ProviderError:
    """What an error reads back as: its kind, message, status string and code."""
    code, status = ERRORS[error.kind]
    return ProviderError(error.kind, error.message, status, code)


def read_error(node: Node, status: int | None) -> ProviderError:
    """An `{"error": {...}}` object. Its own `code` stands in for a missing HTTP status (stream chunks)."""
    error = node["error"]
    error.obj()
    code = error["code"].integer() if error["code"].present else status
    status_text = error["status"].opt_string()
    kind = _kind(code, status_text, error["details"])
    return ProviderError(kind, error["message"].opt_string() or "", status_text, code if status is None else status)


def _kind(code: int | None, status: str | None, details: Node) -> ErrorKind:
    if code == 413:
        return ErrorKind.REQUEST_TOO_LARGE
    kind = _BY_STATUS.get(status or "")
    if kind is None:
        return ErrorKind.SERVER_ERROR if code is None else status_kind(code)
    if kind is ErrorKind.RATE_LIMIT and any(_per_day(detail) for detail in details.items()):
        return ErrorKind.QUOTA_EXCEEDED
    return kind


def _per_day(detail: Node) -> bool:
    return any("PerDay" in (v["quotaId"].opt_string() or "") for v in detail["violations"].items())


def encode_error(kind: ErrorKind, message: str, *, retry_after: float | None = None) -> ErrorReply:
    """Google sends no `retry-after` header: the delay is in the body's RetryInfo only."""
    body = error_object(kind, message, retry_after)
    headers = {"content-type": "application/json; charset=UTF-8"}
    return ErrorReply(ERRORS[kind][0], headers, dump_json(body))


def decode_error(status: int, body: bytes) -> ProviderError:
    """Google's error body, bare or as the one element of a JSON-array stream (`[{"error": …}]`); any other
    body (an HTML front-end page…) still gives a kind from the status."""
    return decode_error_body(_read_bare_or_listed, WHAT, status, body)


def _read_bare_or_listed(node: Node, status: int) -> ProviderError:
    if node.is_list() and len(node.value) == 1:
        node = next(node.items())
    return read_error(node, status)


def rate_limit_headers(limits: RateLimits, now: datetime) -> dict[str, str]:
    """None: the Gemini API advertises no rate-limit state in headers (not even `retry-after` on a 429);
    quotas are only visible in the Cloud console and, once exceeded, in the error body's details."""
    del limits, now
    return {}
