"""Exchanges for tests, shaped as the recording addon builds them: `request` is the one way a test builds a
`RawRequest` (keyword arguments, defaults that make an Anthropic Messages call), `response` and `exchange`
what answered it."""

import struct
import zlib
from datetime import UTC, datetime

import orjson

from llmproxy.model.exchange import RawEvent, RawExchange, RawRequest, RawResponse

ANTHROPIC_KEY = "sk-ant-api03-" + "Zq9xT3vB7nK2mW5pL8rY4cF6hJ1dG0sA" * 3
STARTED = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
# what the Anthropic SDK sends beside its own headers: a JSON body, and a key that looks real, so what stores
# a request has a secret to redact
SDK_HEADERS = (("content-type", "application/json"), ("x-api-key", ANTHROPIC_KEY))


def request(
    body: object = None,
    *,
    method: str = "POST",
    scheme: str = "https",
    host: str = "api.anthropic.com",
    port: int | None = None,
    path: str = "/v1/messages",
    headers: tuple[tuple[str, str], ...] = SDK_HEADERS,
) -> RawRequest:
    """A request as a door hands it over. `body`: bytes as they are, anything else as its JSON (None: no
    body); `port`: the scheme's own unless given; `headers`: all of them, in order (pass `()` for none)."""
    data = body if isinstance(body, bytes) else orjson.dumps(body) if body is not None else b""
    if port is None:
        port = 80 if scheme in ("http", "ws") else 443
    return RawRequest(method, scheme, host, port, path, "HTTP/1.1", headers, data, None)


def response(
    body: bytes | None = b'{"ok":true}',
    *,
    events: tuple[RawEvent, ...] | None = None,
    content_type: str = "application/json",
    status: int = 200,
) -> RawResponse:
    headers = (("content-type", content_type), ("request-id", "req_1"))
    return RawResponse(status, "OK", "HTTP/1.1", headers, None if events is not None else body, events, None)


def exchange(
    req: RawRequest, resp: RawResponse | None = None, error: str | None = None, *, started_at: datetime = STARTED
) -> RawExchange:
    return RawExchange(req, resp, error, started_at, 12.5 if resp else None, 40.0)


def sse_events(*payloads: object, event: str | None = "message_delta") -> tuple[RawEvent, ...]:
    head = f"event: {event}\n".encode() if event else b""
    return tuple(RawEvent(float(i), head + b"data: " + orjson.dumps(p) + b"\n\n") for i, p in enumerate(payloads))


def eventstream_message(payload: bytes, event_type: str = "chunk") -> bytes:
    """One AWS event-stream message (docs/providers.md#aws-event-stream-framing)."""
    headers = b""
    for name, value in ((b":message-type", b"event"), (b":event-type", event_type.encode())):
        headers += struct.pack(">B", len(name)) + name + b"\x07" + struct.pack(">H", len(value)) + value
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


def agent_session(turns: int) -> list[dict[str, object]]:
    """Request bodies of an agent session that re-sends its whole history every turn."""
    messages: list[dict[str, object]] = []
    bodies = []
    for turn in range(turns):
        messages.append({"role": "user", "content": [{"type": "text", "text": f"step {turn}: " + "context " * 40}]})
        bodies.append({"model": "claude-x", "max_tokens": 1024, "messages": list(messages), "stream": True})
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{turn}", "input": {"n": 1.5}}]})
    return bodies
