"""Minimal error bodies for Gemini, Bedrock and Ollama, for their embedding codecs.

Stand-ins: the chat codecs of these providers own their errors (wire-formats.md §5.4, §6.4, §8); when they
land, the embedding codecs should use those modules and this one should go.
"""

from typing import Final

from llmproxy.errors import ParseError
from llmproxy.model import ErrorKind, ProviderError
from llmproxy.providers.base import ErrorReply, dump_json, retry_after_headers, status_kind
from llmproxy.providers.node import Node
from llmproxy.providers.vector_errors import FlatErrors

OLLAMA_ERRORS: Final = FlatErrors("error", "ollama error")

BEDROCK_ERRORS: Final = FlatErrors(
    "message",
    "bedrock error",
    statuses={
        ErrorKind.INVALID_REQUEST: 400,
        ErrorKind.AUTHENTICATION: 403,
        ErrorKind.QUOTA_EXCEEDED: 400,
        ErrorKind.PERMISSION: 403,
        ErrorKind.NOT_FOUND: 404,
        ErrorKind.REQUEST_TOO_LARGE: 400,
        ErrorKind.RATE_LIMIT: 429,
        ErrorKind.SERVER_ERROR: 500,
        ErrorKind.OVERLOADED: 503,
        ErrorKind.TIMEOUT: 408,
    },
    codes={
        ErrorKind.INVALID_REQUEST: "ValidationException",
        ErrorKind.AUTHENTICATION: "UnrecognizedClientException",
        ErrorKind.QUOTA_EXCEEDED: "ServiceQuotaExceededException",
        ErrorKind.PERMISSION: "AccessDeniedException",
        ErrorKind.NOT_FOUND: "ResourceNotFoundException",
        ErrorKind.REQUEST_TOO_LARGE: "ValidationException",
        ErrorKind.RATE_LIMIT: "ThrottlingException",
        ErrorKind.SERVER_ERROR: "InternalServerException",
        ErrorKind.OVERLOADED: "ServiceUnavailableException",
        ErrorKind.TIMEOUT: "ModelTimeoutException",
    },
    type_header="x-amzn-ErrorType",
)
"""`{"message"}` with the exception name in `x-amzn-ErrorType`; the body alone says only the status."""

# kind → (HTTP status, google.rpc status), as generativelanguage.googleapis.com answers.
_GEMINI: Final[dict[ErrorKind, tuple[int, str]]] = {
    ErrorKind.INVALID_REQUEST: (400, "INVALID_ARGUMENT"),
    ErrorKind.AUTHENTICATION: (401, "UNAUTHENTICATED"),
    ErrorKind.QUOTA_EXCEEDED: (429, "RESOURCE_EXHAUSTED"),
    ErrorKind.PERMISSION: (403, "PERMISSION_DENIED"),
    ErrorKind.NOT_FOUND: (404, "NOT_FOUND"),
    ErrorKind.REQUEST_TOO_LARGE: (400, "INVALID_ARGUMENT"),
    ErrorKind.RATE_LIMIT: (429, "RESOURCE_EXHAUSTED"),
    ErrorKind.SERVER_ERROR: (500, "INTERNAL"),
    ErrorKind.OVERLOADED: (503, "UNAVAILABLE"),
    ErrorKind.TIMEOUT: (504, "DEADLINE_EXCEEDED"),
}


def gemini_encode_error(kind: ErrorKind, message: str, *, retry_after: float | None = None) -> ErrorReply:
    status, rpc = _GEMINI[kind]
    error: dict[str, object] = {"code": status, "message": message, "status": rpc}
    if retry_after is not None:
        delay = f"{max(0, int(-(-retry_after // 1)))}s"
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]
    headers = {"content-type": "application/json; charset=UTF-8", **retry_after_headers(retry_after)}
    return ErrorReply(status, headers, dump_json({"error": error}))


def gemini_decode_error(status: int, body: bytes) -> ProviderError:
    """`{"error": {"code", "message", "status"}}`; any other body still gives a kind from the status."""
    try:
        error = Node.parse(body, "gemini error")["error"]
        message, rpc = error["message"].opt_string(), error["status"].opt_string()
    except ParseError:
        message = rpc = None
    if message is None:
        return ProviderError(status_kind(status), body.decode("utf-8", "replace"), None, status)
    return ProviderError(status_kind(status), message, rpc, status)
