"""How an API speaks over a WebSocket, for recording, replaying and mocking it message by message.

An LLM API on a WebSocket is still requests and answers: the client sends a message that asks (Responses'
`response.create`), the server answers with the events it would have streamed over HTTP, one message each,
the last of which says the answer is over. A `WebSocketCodec` says which messages those are, and how a
request that names an earlier answer on the same connection instead of repeating it (Responses'
`previous_response_id`) is read whole — so a request over a WebSocket is matched and mocked exactly as the
same request over HTTP. Each API that offers one adds a codec here (`CODECS`, by the route it serves);
another provider's realtime API follows the same shape (`llmproxy.providers.registry.websocket_codec`).
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from llmproxy.model import Operation, Provider


class Connection(Protocol):
    """What one WebSocket connection has said so far: enough to read its next request whole."""

    def request(self, message: Any) -> Any | None:
        """The request `message` stands for, whole (the JSON of the same request over HTTP, as this
        codec's `is_request` sees it); None when it refers to an answer this connection never gave."""
        ...

    def answered(self, events: Iterable[Any]) -> None:
        """Take note of the answer (its events, parsed) that the last request got."""
        ...


@dataclass(frozen=True, slots=True)
class WebSocketCodec:
    provider: Provider
    operation: Operation

    is_request: Callable[[Any], bool]
    """Whether a message from the client (parsed JSON) asks for an answer: each one is an exchange."""

    ends_answer: Callable[[Any], bool]
    """Whether a message from the server (parsed JSON) is the last of an answer."""

    connection: Callable[[], Connection]
    """A new connection's state."""

    error_message: Callable[[int, Mapping[str, str], bytes], bytes]
    """The message that carries an error answer — its HTTP status, headers and body as the API would send
    them over HTTP — on the WebSocket."""

    unknown_reference: Callable[[Any], bytes]
    """The error message for a request that refers to an answer the connection never gave (the client is
    expected to send it again whole)."""


def parsed(message: bytes | str) -> Any:
    """A message's JSON, or None when it is not JSON (which no codec treats as a request or an answer)."""
    try:
        return orjson.loads(message)
    except orjson.JSONDecodeError:
        return None
