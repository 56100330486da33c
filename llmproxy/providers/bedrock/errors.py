"""Bedrock's errors (docs/providers.md#aws-bedrock): HTTP error bodies, and the exception frames that end a stream.

The error code travels in the `x-amzn-errortype` header; the body is `{"message": …}`. The code is also
written into the body as `__type` (the AWS JSON spelling botocore falls back to), so a body alone (a decoded
response, `decode_error`) still names its error. Mid-stream, a code that is a member of the stream's union
is sent as an `exception` frame (botocore raises EventStreamError with that code); other codes go in an
`error` frame's `:error-code` header, which botocore reads for codes outside the union.
"""

import hashlib
from datetime import datetime
from typing import Final
from uuid import UUID

from llmproxy.framing.eventstream import EventMessage, encode_event
from llmproxy.model import ErrorKind, ProviderError
from llmproxy.providers.base import (
    ErrorReply,
    JsonObject,
    RateLimits,
    decode_error_body,
    dump_json,
    retry_after_headers,
    status_kind,
)
from llmproxy.providers.node import Node

WHAT: Final = "bedrock error"

# kind → (HTTP status, code), from the service model's exception shapes; authentication failures come from
# AWS's signature check, before Bedrock. A request too large is a ValidationException, told apart by 413.
ERRORS: Final[dict[ErrorKind, tuple[int, str]]] = {
    ErrorKind.INVALID_REQUEST: (400, "ValidationException"),
    ErrorKind.AUTHENTICATION: (403, "UnrecognizedClientException"),
    ErrorKind.PERMISSION: (403, "AccessDeniedException"),
    ErrorKind.NOT_FOUND: (404, "ResourceNotFoundException"),
    ErrorKind.REQUEST_TOO_LARGE: (413, "ValidationException"),
    ErrorKind.RATE_LIMIT: (429, "ThrottlingException"),
    ErrorKind.QUOTA_EXCEEDED: (400, "ServiceQuotaExceededException"),
    ErrorKind.SERVER_ERROR: (500, "InternalServerException"),
    ErrorKind.OVERLOADED: (503, "ServiceUnavailableException"),
    ErrorKind.TIMEOUT: (408, "ModelTimeoutException"),
}
_KINDS: Final[dict[str, ErrorKind]] = {
    "ModelNotReadyException": ErrorKind.OVERLOADED,
    "ModelErrorException": ErrorKind.SERVER_ERROR,
    "ModelStreamErrorException": ErrorKind.SERVER_ERROR,
    "ConflictException": ErrorKind.INVALID_REQUEST,
    "InvalidSignatureException": ErrorKind.AUTHENTICATION,
    "IncompleteSignatureException": ErrorKind.AUTHENTICATION,
    "MissingAuthenticationTokenException": ErrorKind.AUTHENTICATION,
    "ExpiredTokenException": ErrorKind.AUTHENTICATION,
    **{code: kind for kind, (_, code) in ERRORS.items() if kind is not ErrorKind.REQUEST_TOO_LARGE},
}

# The exception members of each stream union (service-2.json `ConverseStreamOutput`, `ResponseStream`).
CONVERSE_STREAM_EXCEPTIONS: Final = frozenset(
    {
        "ValidationException",
        "ThrottlingException",
        "InternalServerException",
        "ServiceUnavailableException",
        "ModelStreamErrorException",
    }
)
INVOKE_STREAM_EXCEPTIONS: Final = CONVERSE_STREAM_EXCEPTIONS | {"ModelTimeoutException"}


def error_code(raw: str) -> str:
    """The bare code from any spelling: `Code:http://…` (header), `ns#Code` (`__type`), `code` (stream)."""
    code = raw.split(":", 1)[0].rsplit("#", 1)[-1]
    return code[:1].upper() + code[1:]


def kind_of(code: str | None, status: int | None) -> ErrorKind:
    if code == "ValidationException" and status == 413:
        return ErrorKind.REQUEST_TOO_LARGE
    if code in _KINDS:
        return _KINDS[code]
    return ErrorKind.SERVER_ERROR if status is None else status_kind(status)


def error_body(kind: ErrorKind, message: str) -> JsonObject:
    return {"message": message, "__type": ERRORS[kind][1]}


def is_error_body(node: Node) -> bool:
    """An error where a response was expected: a message and none of a response's members."""
    value = node.obj()
    return "output" not in value and "type" not in value and ("message" in value or "Message" in value)


def read_error_body(node: Node, status: int | None) -> ProviderError:
    raw = node.first("__type", "code", "Code").opt_string()
    code = error_code(raw) if raw else None
    message = node.first("message", "Message").opt_string() or ""
    return ProviderError(kind_of(code, status), message, code, status)


def encode_error(kind: ErrorKind, message: str, *, retry_after: float | None = None) -> ErrorReply:
    """The error reply; a retry hint is sent as `retry-after(-ms)`, which the anthropic Bedrock client reads,
    and as `x-amz-retry-after` (milliseconds), which botocore's standard retry mode waits at least."""
    status, code = ERRORS[kind]
    headers = {
        "content-type": "application/json",
        "x-amzn-errortype": code,
        "x-amzn-requestid": request_id(kind, message),
        **retry_hint(retry_after),
    }
    return ErrorReply(status, headers, dump_json(error_body(kind, message)))


def decode_error(status: int, body: bytes) -> ProviderError:
    """Bedrock's error body; any other body (a gateway page…) still gives a kind from the status."""
    return decode_error_body(_read_object, WHAT, status, body)


def _read_object(node: Node, status: int) -> ProviderError:
    node.obj()  # an object, or a ParseError
    return read_error_body(node, status)


def request_id(*parts: object) -> str:
    """A deterministic AWS-style request id (a UUID) for encoders that must invent one."""
    return str(UUID(bytes=hashlib.sha256(repr(parts).encode()).digest()[:16]))


def rate_limit_headers(limits: RateLimits, now: datetime) -> dict[str, str]:
    """Bedrock advertises no rate-limit state; only a retry hint is sent."""
    del now
    return retry_hint(limits.retry_after)


def retry_hint(seconds: float | None) -> dict[str, str]:
    """`retry-after(-ms)` and AWS's own `x-amz-retry-after` (whole milliseconds) for a wait of `seconds`."""
    if seconds is None:
        return {}
    return {**retry_after_headers(seconds), "x-amz-retry-after": str(max(0, round(seconds * 1000)))}


# -- in streams ------------------------------------------------------------------------------------------


def visible_error(error: ProviderError) -> ProviderError:
    """What a failure reads back as, from a stream frame or a body alone: the kind its code names (a
    request too large is a plain ValidationException without its 413), and no status."""
    kind = ErrorKind.INVALID_REQUEST if error.kind is ErrorKind.REQUEST_TOO_LARGE else error.kind
    return ProviderError(kind, error.message, ERRORS[kind][1], None)


def failure_frame(error: ProviderError, members: frozenset[str]) -> bytes:
    """The frame that ends a stream with this error."""
    code = ERRORS[error.kind][1]
    if code in members:
        headers = {":exception-type": code[0].lower() + code[1:], ":content-type": "application/json"}
        return encode_event({**headers, ":message-type": "exception"}, dump_json({"message": error.message}))
    return encode_event({":error-code": code, ":error-message": error.message, ":message-type": "error"})


def read_failure(message: EventMessage, what: str) -> ProviderError | None:
    """The error an `exception` or `error` frame carries; None for any other frame."""
    kind = message.string(":message-type")
    if kind not in ("exception", "error"):
        return None
    if kind == "error":
        code = error_code(message.string(":error-code") or "") or None
        return ProviderError(kind_of(code, None), message.string(":error-message") or "", code, None)
    raw = message.string(":exception-type")
    payload = Node.parse(message.payload, what)
    payload.obj()
    code = error_code(raw) if raw else None
    return ProviderError(kind_of(code, None), payload.first("message", "Message").opt_string() or "", code, None)
