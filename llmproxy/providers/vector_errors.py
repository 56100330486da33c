"""Error bodies that are one flat JSON object with the message under one key: Cohere ``{"message": …}`` and Voyage
``{"detail": …}`` (docs/providers.md#embeddings-and-rerank-on-the-wire). These APIs name no error type, so the HTTP
status alone carries the kind: each kind gets its own status, and decoding reads the kind back from it."""

from dataclasses import dataclass
from typing import Final

from llmproxy.errors import ParseError
from llmproxy.model import ErrorKind, ProviderError
from llmproxy.providers.base import (
    KIND_STATUSES,
    ErrorReply,
    dump_json,
    retry_after_headers,
    status_kind,
    unreadable_error,
)
from llmproxy.providers.node import Node


@dataclass(frozen=True, slots=True)
class FlatErrors:
    """Encoder and decoder for ``{<key>: <message>}`` bodies."""

    key: str
    what: str

    def encode_error(self, kind: ErrorKind, message: str, *, retry_after: float | None = None) -> ErrorReply:
        headers = {"content-type": "application/json", **retry_after_headers(retry_after)}
        return ErrorReply(KIND_STATUSES[kind], headers, dump_json({self.key: message}))

    def decode_error(self, status: int, body: bytes) -> ProviderError:
        """The message under the key; any other body (a gateway's HTML…) is kept as text."""
        message: str | None
        try:
            message = Node.parse(body, self.what)[self.key].opt_string()
        except ParseError:
            message = None
        if message is None:
            return unreadable_error(status, body)
        return ProviderError(status_kind(status), message, None, status)


COHERE_ERRORS: Final = FlatErrors("message", "cohere error")
VOYAGE_ERRORS: Final = FlatErrors("detail", "voyage error")
