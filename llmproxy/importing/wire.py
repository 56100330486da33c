"""An exchange as another tool stored it (URL, headers, bodies, status, timings) made into the `RawExchange`
llmproxy's proxy would have captured: bodies content-decoded as the proxy decodes them, and a stream's
answer (stored by those tools as one body holding the whole SSE or NDJSON text) cut into its wire events by
the proxy's own `StreamCapture`.
"""

from collections.abc import Sequence
from datetime import datetime
from urllib.parse import urlsplit

from llmproxy.cassette.decoding import decode_body
from llmproxy.cassette.stream_capture import StreamCapture
from llmproxy.model.exchange import RawEvent, RawExchange, RawRequest, RawResponse

type Headers = Sequence[tuple[str, str]]


def header(headers: Headers, name: str) -> str | None:
    """The first value of the header `name` (lower-case), if any."""
    return next((value for key, value in headers if key.lower() == name), None)


def raw_request(
    method: str, url: str, http_version: str, headers: Headers, body: bytes, *, encoded: bool
) -> RawRequest:
    """`encoded`: the body is as it was on the wire (vcrpy); else it was stored decoded (HAR) and is decoded only
    if it still can be. Raises ValueError for a URL that is not absolute."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname:
        what = f"a {parts.scheme!r} URL" if parts.scheme else "a relative URL"
        raise ValueError(f"{what}, not an absolute http(s) one")  # the URL itself may hold a key: not shown
    port = parts.port or (443 if parts.scheme in ("https", "wss") else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    encoding = header(headers, "content-encoding")
    decoded, undecodable = _decoded(body, encoding, encoded)
    return RawRequest(
        method.upper(),
        parts.scheme,
        parts.hostname,
        port,
        path,
        http_version,
        tuple(headers),
        decoded,
        encoding,
        undecodable,
    )


def raw_response(
    status: int,
    reason: str,
    http_version: str,
    headers: Headers,
    body: bytes,
    *,
    encoded: bool,
    first_event_ms: float = 0.0,
    last_event_ms: float | None = None,
) -> tuple[RawResponse, tuple[str, ...]]:
    """The response, and what was noticed on the way (a cut stream). A stream's events are spread evenly from
    `first_event_ms` to `last_event_ms` (the tools that store a stream as one body keep no time per event)."""
    encoding = header(headers, "content-encoding")
    data, undecodable = _decoded(body, encoding, encoded)
    cut = (
        None
        if undecodable is not None
        else split_stream(data, header(headers, "content-type"), first_event_ms, last_event_ms)
    )
    if cut is None:
        return RawResponse(status, reason, http_version, tuple(headers), data, None, encoding, undecodable), ()
    events, notes = cut
    return RawResponse(status, reason, http_version, tuple(headers), None, events, encoding), notes


def split_stream(
    data: bytes, content_type: str | None, first_ms: float, last_ms: float | None
) -> tuple[tuple[RawEvent, ...], tuple[str, ...]] | None:
    """A decoded answer of a stream's media type cut into its events as the proxy cuts them, spread evenly
    from `first_ms` to `last_ms`, and what the cut noticed; None for a media type that is no stream."""
    if not content_type or not StreamCapture.streams(content_type):
        return None
    capture = StreamCapture(content_type, None, 0.0)
    capture.feed(data, 0.0)
    events = capture.finish(0.0)
    step = ((last_ms if last_ms is not None else first_ms) - first_ms) / max(1, len(events) - 1)
    timed = tuple(RawEvent(round(first_ms + step * n, 3), event.data) for n, event in enumerate(events))
    return timed, (capture.warning,) if capture.warning else ()


def raw_exchange(
    request: RawRequest,
    response: tuple[RawResponse, tuple[str, ...]] | None,
    started_at: datetime,
    ttfb_ms: float | None = None,
    total_ms: float | None = None,
    error: str | None = None,
) -> RawExchange:
    answer, notes = response if response is not None else (None, ())
    return RawExchange(request, answer, error, started_at, ttfb_ms, total_ms, notes)


def _decoded(body: bytes, encoding: str | None, encoded: bool) -> tuple[bytes, str | None]:
    if not body or not encoding:
        return body, None
    decoded, undecodable = decode_body(body, encoding)
    if undecodable is not None and not encoded:
        return body, None  # stored decoded, as the header no longer says
    return decoded, undecodable
