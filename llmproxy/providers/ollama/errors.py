"""Ollama's errors (docs/providers.md#ollama): `{"error": "<message>"}` with an HTTP status, as a whole body or as
one NDJSON line in a stream that already began. The body says nothing but the message, so the status
alone carries the kind (`KIND_STATUSES`: Ollama itself answers 400, 404, 500 and 503 "server busy";
ollama.com adds 401, 403 and 429; the others are the statuses the kinds imply). Ollama sends no rate-limit
headers.
"""

from datetime import datetime
from typing import Final

from llmproxy.model import ErrorKind, ProviderError
from llmproxy.providers.base import (
    KIND_STATUSES,
    ErrorReply,
    JsonObject,
    RateLimits,
    decode_error_body,
    dump_json,
    retry_after_headers,
    status_kind,
)
from llmproxy.providers.node import Node

WHAT: Final = "ollama error"


def error_object(message: str) -> JsonObject:
    return {"error": message}


def read_error(node: Node, status: int | None) -> ProviderError:
    """An `error` line or body; without a status (mid-stream) it is a server error."""
    kind = ErrorKind.SERVER_ERROR if status is None else status_kind(status)
    return ProviderError(kind, node["error"].string(), None, status)


def visible_error(error: ProviderError) -> ProviderError:
    """What a stream's `error` line (or a body read without its status) carries: the message alone."""
    return ProviderError(ErrorKind.SERVER_ERROR, error.message)


def encode_error(kind: ErrorKind, message: str, *, retry_after: float | None = None) -> ErrorReply:
    headers = {"content-type": "application/json; charset=utf-8", **retry_after_headers(retry_after)}
    return ErrorReply(KIND_STATUSES[kind], headers, dump_json(error_object(message)))


def decode_error(status: int, body: bytes) -> ProviderError:
    """`{"error": "…"}`; any other body (a proxy's HTML page…) keeps its text, the status gives the kind."""
    return decode_error_body(read_error, WHAT, status, body)


def rate_limit_headers(limits: RateLimits, now: datetime) -> dict[str, str]:
    """Ollama sends no rate-limit headers (a local server has no quota; ollama.com documents none)."""
    del limits, now
    return {}
