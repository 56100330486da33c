"""The Responses API over WebSocket (docs/providers.md#responses-over-websocket): `response.create` messages
from the client, and the events an HTTP stream would carry, one JSON text message each, from the server.

On one connection a request may name the response before it (`previous_response_id`) and send only the input
items that are new since: Codex CLI does so when the rest is the previous request's input followed by that
response's output items. `ResponsesConnection` keeps both, so every request is read whole — the body the same
request would have over HTTP, `previous_response_id` resolved and gone — and matched and mocked as one.
"""

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import orjson

from llmproxy.model import Completion, Operation, Provider
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, ChatCodec, JsonObject, dump_json
from llmproxy.providers.openai_responses import RESPONSES
from llmproxy.providers.openai_responses.reassemble import decode_messages
from llmproxy.providers.openai_responses.stream import stream_events
from llmproxy.providers.websocket import WebSocketCodec

REQUEST = "response.create"
# what ends an answer: its final lifecycle event, or an error frame (with an HTTP status, or without one)
_ENDS = frozenset({"response.completed", "response.failed", "response.incomplete", "error"})
_NOT_FORWARDED = frozenset({"content-type", "content-length"})


def is_request(message: Any) -> bool:
    return isinstance(message, dict) and message.get("type") == REQUEST


def ends_answer(message: Any) -> bool:
    return isinstance(message, dict) and message.get("type") in _ENDS


class ResponsesConnection:
    """The last request read whole, and what its answer gave, if it completed."""

    def __init__(self) -> None:
        self._previous: str | None = None  # the id of the last response that completed
        self._input: list[Any] = []  # the whole input of the request it answered
        self._output: list[Any] = []  # its output items, in order
        self._asked: list[Any] = []  # the whole input of the request being answered

    def request(self, message: Any) -> Any | None:
        if not isinstance(message, dict):
            return message
        body = {key: value for key, value in message.items() if key not in ("type", "previous_response_id")}
        named = message.get("previous_response_id")
        items = body.get("input", [])
        if isinstance(items, str):  # the API reads a string as one user message: one form, however it came
            body["input"] = items = [{"role": "user", "content": items}]
        if named is not None:
            if named != self._previous or not isinstance(items, list):
                return None
            body["input"] = items = [*self._input, *self._output, *items]
        self._asked = list(items) if isinstance(items, list) else []
        return body

    def answered(self, events: Iterable[Any]) -> None:
        output: dict[int, Any] = {}
        completed: str | None = None
        for event in events:
            if not isinstance(event, dict):
                continue
            if event.get("type") == "response.output_item.done" and isinstance(event.get("output_index"), int):
                output[event["output_index"]] = event.get("item")
            elif event.get("type") == "response.completed" and isinstance(event.get("response"), dict):
                found = event["response"].get("id")
                completed = found if isinstance(found, str) else None
        # only a completed response can be built on (Codex sends the whole input after any other)
        self._previous = completed
        self._input = self._asked if completed else []
        self._output = [output[index] for index in sorted(output)] if completed else []


def error_message(status: int, headers: Mapping[str, str], body: bytes) -> bytes:
    """`{"type": "error", "status", "error", "headers"}`: Codex CLI treats it as the HTTP error it wraps."""
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        error = {"type": "server_error", "message": body.decode("utf-8", "replace")}
    kept = {name.lower(): value for name, value in headers.items() if name.lower() not in _NOT_FORWARDED}
    return dump_json({"type": "error", "status": status, "error": error, "headers": kept})


def unknown_reference(message: Any) -> bytes:
    named = message.get("previous_response_id") if isinstance(message, dict) else None
    error = {
        "type": "invalid_request_error",
        "code": "previous_response_not_found",
        "message": f"Previous response with id '{named}' not found.",
        "param": "previous_response_id",
    }
    return dump_json({"type": "error", "status": 400, "error": error})


def encode_messages(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    return [dump_json(event) for event in stream_events(completion, request, delta_chars=delta_chars)]


RESPONSES_WEBSOCKET = WebSocketCodec(
    provider=Provider.OPENAI,
    operation=Operation.RESPONSES,
    is_request=is_request,
    ends_answer=ends_answer,
    connection=ResponsesConnection,
    error_message=error_message,
    unknown_reference=unknown_reference,
)

RESPONSES_OVER_WEBSOCKET: ChatCodec = replace(
    RESPONSES, encode_stream=encode_messages, decode_stream=decode_messages, stream_media_type="application/json"
)
"""The Responses chat codec for requests read off a WebSocket: a stream is its events as messages."""
