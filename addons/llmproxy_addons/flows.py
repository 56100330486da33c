"""The data seam: mitmproxy flows as llmproxy's core capture types, and nothing else (docs/architecture.md#seams)."""

from datetime import UTC, datetime

from mitmproxy import http

from llmproxy.cassette.decoding import decode_body
from llmproxy.model.exchange import RawEvent, RawExchange, RawRequest, RawResponse


def raw_request(request: http.Request) -> RawRequest:
    body, undecodable = decode_body(request.raw_content or b"", request.headers.get("content-encoding"))
    return RawRequest(
        method=request.method,
        scheme=request.scheme,
        host=request.pretty_host,
        port=request.port,
        path=request.path,
        http_version=request.http_version,
        headers=tuple(request.headers.items(multi=True)),
        body=body,
        content_encoding=request.headers.get("content-encoding"),
        undecodable=undecodable,
    )


def raw_response(
    response: http.Response, events: tuple[RawEvent, ...] | None, undecodable: str | None = None
) -> RawResponse:
    """`undecodable`: why a stream's events are still encoded (`StreamCapture.undecodable`)."""
    body: bytes | None = None
    if events is None:
        body, undecodable = decode_body(response.raw_content or b"", response.headers.get("content-encoding"))
    return RawResponse(
        status=response.status_code,
        reason=response.reason,
        http_version=response.http_version,
        headers=tuple(response.headers.items(multi=True)),
        body=body,
        events=events,
        content_encoding=response.headers.get("content-encoding"),
        undecodable=undecodable,
    )


def raw_exchange(
    flow: http.HTTPFlow,
    request: RawRequest,
    events: tuple[RawEvent, ...] | None,
    error: str | None,
    notes: tuple[str, ...] = (),
    undecodable: str | None = None,
) -> RawExchange:
    """The exchange as it ended. `request` was captured before any addon rewrote where it goes."""
    start = flow.request.timestamp_start
    response = flow.response
    first_byte = response.timestamp_start if response is not None else None
    end = (response.timestamp_end if response is not None else None) or (flow.error.timestamp if flow.error else None)
    return RawExchange(
        request=request,
        response=raw_response(response, events, undecodable) if response is not None else None,
        error=error,
        started_at=datetime.fromtimestamp(start, UTC),
        ttfb_ms=_ms(first_byte - start) if first_byte else None,
        total_ms=_ms(end - start) if end else None,
        notes=notes,
    )


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)
