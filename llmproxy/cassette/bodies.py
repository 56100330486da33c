"""Bytes ⇄ stored bodies, redacted on the way in, and stored stream events back to bytes.

A body is stored as parsed JSON when it is JSON (keys in the order sent, so a given client's bodies read
the same every time; whitespace is not kept), as text when it is UTF-8, else as base64. A stream event is
stored parsed only when re-encoding gives back its exact bytes (`stream_redact`), so `event_bytes` returns
the (redacted) bytes that were on the wire. A WebSocket message is one event (`store_message`): parsed when
it is exactly compact JSON, else verbatim; a binary message always as base64.
"""

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from llmproxy.cassette.model import (
    Base64Body,
    Base64Event,
    Body,
    Event,
    JsonBody,
    JsonLineEvent,
    MessageEvent,
    SseEvent,
    TextBody,
    TextEvent,
)
from llmproxy.cassette.redact import Redactor
from llmproxy.model.exchange import RawEvent, RawExchange
from llmproxy.providers.node import Parsed


@dataclass(frozen=True, slots=True)
class Bodies:
    """An exchange's JSON bodies, parsed once for the conversion and the audit alike: each `Parsed` (its
    value, never changed by either) or None where the body is not JSON (then each reads the bytes itself).
    `stream`: a streamed answer's event payloads, which the conversion parses as it stores the events
    (`stream_redact.store_events`) and adds here for the audit; empty when it could not (then the audit reads
    the events' bytes)."""

    request: Parsed | None
    answer: Parsed | None
    stream: list[Parsed] = field(default_factory=list)

    @classmethod
    def of(cls, raw: RawExchange) -> "Bodies":
        response = raw.response
        answer = response.body if response is not None and not response.undecodable else None
        return cls(_json(raw.request.body if not raw.request.undecodable else b""), _json(answer))


def _json(body: bytes | None) -> Parsed | None:
    if not body or body[:1] not in b"{[":  # the APIs' bodies: an object (or a list); anything else read as is
        return None
    try:
        return Parsed(orjson.loads(body))
    except orjson.JSONDecodeError:
        return None


def is_json_type(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def store_body(
    data: bytes,
    content_type: str | None,
    redactor: Redactor,
    *,
    expect_json: bool,
    shape: Callable[[Any], Any] | None = None,
    parsed: Any = None,
) -> tuple[Body, str | None]:
    """The stored form of a body, and a note when it claimed to be JSON, or was on an API that speaks JSON
    (`expect_json`), but was not. Without a content type, `expect_json` bodies are tried as JSON. `shape`
    turns a parsed JSON value into what is stored (history sharing) before it is redacted, so redaction
    only pays for what is stored. `parsed`: the body's JSON when the caller has parsed it already."""
    if is_json_type(content_type) or (expect_json and not content_type):
        if parsed is None:
            try:
                parsed = orjson.loads(data)
            except orjson.JSONDecodeError as exc:
                stored = store_verbatim(redactor.data(data))
                return stored, f"not valid JSON ({exc}): stored verbatim"
        return JsonBody(json=redactor.json(shape(parsed) if shape else parsed)), None
    stored = store_verbatim(redactor.data(data))
    if expect_json:  # an LLM API answered with something else: a gateway's page, a proxy's error…
        return stored, f"is {content_type!r}, not the JSON the API speaks: stored verbatim"
    return stored, None


def store_verbatim(data: bytes) -> Body:
    try:
        return TextBody(text=data.decode())
    except UnicodeDecodeError:
        return Base64Body(base64=base64.b64encode(data).decode("ascii"))


def body_bytes(body: Body) -> bytes:
    """The bytes a stored body stands for (JSON compact, as the providers send it)."""
    if isinstance(body, JsonBody):
        return orjson.dumps(body.json_)
    if isinstance(body, TextBody):
        return body.text.encode()
    return _b64(body.base64)


def store_message(event: RawEvent, redactor: Redactor) -> Event:
    """A WebSocket message: a text message that is exactly compact JSON parsed, another verbatim, a binary
    message as base64 (`is_binary_message` tells them apart again)."""
    t_ms = round(event.t_ms, 3)
    data = redactor.data(event.data)
    if event.binary:
        return Base64Event(t_ms=t_ms, base64=base64.b64encode(data).decode("ascii"))
    if data.startswith((b"{", b"[")):
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
        else:
            if orjson.dumps(value) == data:
                return MessageEvent(t_ms=t_ms, message=redactor.json(value))
    return TextEvent(t_ms=t_ms, text=data.decode("utf-8", "replace"))


def is_binary_message(event: Event) -> bool:
    return isinstance(event, Base64Event)


def event_bytes(event: Event) -> bytes:
    if isinstance(event, SseEvent):
        return encode_sse(event.event, event.data)
    if isinstance(event, MessageEvent):
        return orjson.dumps(event.message)
    if isinstance(event, JsonLineEvent):
        return orjson.dumps(event.json_) + b"\n"
    if isinstance(event, TextEvent):
        return event.text.encode()
    return _b64(event.base64)


def encode_sse(name: str | None, value: Any) -> bytes:
    """An SSE event as `SseEvent` stores it: ``event: NAME`` when named, one compact ``data:`` line."""
    head = b"event: " + name.encode() + b"\n" if name is not None else b""
    return head + b"data: " + orjson.dumps(value) + b"\n\n"


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"not valid base64: {exc}") from None
