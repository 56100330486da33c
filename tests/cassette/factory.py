"""Captured exchanges for the cassette tests, shaped as the recording addon builds them."""

import struct
import zlib
from datetime import UTC, datetime

import orjson

from llmproxy.model.exchange import RawEvent, RawExchange, RawRequest, RawResponse

ANTHROPIC_KEY = "sk-ant-api03-" + "Zq9xT3vB7nK2mW5pL8rY4cF6hJ1dG0sA" * 3
STARTED = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)


def request(
    body: object = None,
    *,
    host: str = "api.anthropic.com",
    path: str = "/v1/messages",
    headers: tuple[tuple[str, str], ...] = (),
    raw: bytes | None = None,
    method: str = "POST",
) -> RawRequest:
    data = raw if raw is not None else orjson.dumps(body) if body is not None else b""
    base = (("content-type", "application/json"), ("x-api-key", ANTHROPIC_KEY))
    return RawRequest(method, "https", host, 443, path, "HTTP/1.1", base + headers, data, None)


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
