"""A stored exchange as if it had just been captured: its bodies and events as the bytes they stand for — what
the dashboard reads of a cassette at rest and what `llmproxy export otlp` turns into spans."""

from typing import Any
from urllib.parse import urlsplit

from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.model import Exchange
from llmproxy.model.exchange import RawEvent, RawExchange, RawRequest, RawResponse


def raw_exchange(exchange: Exchange) -> RawExchange:
    """A stored exchange as if captured: its bodies and events as the bytes they stand for."""
    request = exchange.request
    response = exchange.response
    raw_response = None
    if response is not None:
        events = None
        if response.events is not None:
            events = tuple(RawEvent(event.t_ms, event_bytes(event)) for event in response.events)
        raw_response = RawResponse(
            response.status,
            response.reason,
            response.http_version,
            _headers(response.headers),
            body_bytes(response.body) if response.body is not None and events is None else None,
            events,
            None,
        )
    timings = exchange.timings
    return RawExchange(
        raw_request(request.method, request.url, request.http_version, request.headers, request.body),
        raw_response,
        exchange.error,
        timings.started_at,
        timings.ttfb_ms,
        timings.total_ms,
    )


def raw_request(method: str, url: str, version: str, headers: list[str], body: Any) -> RawRequest:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    data = body_bytes(body) if body is not None else b""
    return RawRequest(method, parts.scheme, parts.hostname or "", port, path, version, _headers(headers), data, None)


def _headers(lines: list[str]) -> tuple[tuple[str, str], ...]:
    pairs = (line.partition(":") for line in lines)
    return tuple((name.strip(), value.strip()) for name, _, value in pairs)
