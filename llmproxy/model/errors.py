"""Provider error kinds: what went wrong, independent of how each provider spells it."""

from dataclasses import dataclass
from enum import StrEnum


class ErrorKind(StrEnum):
    INVALID_REQUEST = "invalid_request"
    AUTHENTICATION = "authentication"
    PERMISSION = "permission"
    NOT_FOUND = "not_found"
    REQUEST_TOO_LARGE = "request_too_large"
    RATE_LIMIT = "rate_limit"
    QUOTA_EXCEEDED = "quota_exceeded"
    SERVER_ERROR = "server_error"
    OVERLOADED = "overloaded"
    TIMEOUT = "timeout"


@dataclass(frozen=True, slots=True)
class ProviderError:
    """An error as a provider reports it: the kind, the message, and the provider's own type string."""

    kind: ErrorKind
    message: str
    type: str | None = None
    status: int | None = None
