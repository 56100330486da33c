"""A captured exchange as a cassette exchange: redacted, bodies converted, the API it speaks named.

Nothing captured is dropped: a body that cannot be stored as it claims (invalid JSON on a JSON API) is
stored verbatim with a note, and a part that fails to convert for any other reason is stored as base64
with a note, so one odd exchange never costs the others.
"""

import base64
import functools
import logging
from collections.abc import Callable
from typing import Any

from llmproxy.cassette.bodies import Bodies, is_json_type, store_body, store_message, store_verbatim
from llmproxy.cassette.history import HistoryIndex
from llmproxy.cassette.model import (
    Base64Body,
    Body,
    Exchange,
    Extends,
    Injection,
    JsonBody,
    Places,
    Request,
    Response,
    Timings,
    WebSocket,
    build,
    header_lines,
)
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.stream_redact import store_events
from llmproxy.http import authority
from llmproxy.model import Route
from llmproxy.model.exchange import RawExchange, RawRequest, RawResponse
from llmproxy.providers.node import Parsed
from llmproxy.providers.routes import detect, with_body
from llmproxy.tool_protocols import SESSION_HEADER

logger = logging.getLogger(__name__)


def url(request: RawRequest, redactor: Redactor) -> str:
    """The request's URL as a cassette stores it, its secrets redacted."""
    return _url(redactor, request.scheme, request.host, request.port, request.path)


@functools.lru_cache(maxsize=256)
def _url(redactor: Redactor, scheme: str, host: str, port: int, path: str) -> str:
    """Once per URL: a journal or a recording sends thousands of requests to the same few."""
    return f"{scheme}://{authority(scheme, host, port)}{redactor.path(path)}"


@functools.lru_cache(maxsize=256)
def shown_model(redactor: Redactor, model: str) -> str:
    """A model named in a request's JSON as a cassette stores it (a string of the body: redacted as one), once
    per model."""
    redacted: str = redactor.json({"model": model})["model"]
    return redacted


def request_line(request: RawRequest, redactor: Redactor) -> str:
    """The request in a line for a log or a summary, its secrets redacted: "POST https://api.anthropic.com/v1/messages"."""
    return f"{request.method} {url(request, redactor)}"


def to_exchange(
    raw: RawExchange,
    exchange_id: int,
    redactor: Redactor,
    history: HistoryIndex | None = None,
    connection: int | None = None,
    places: Places | None = None,
    bodies: Bodies | None = None,
) -> Exchange:
    """`history`: the cassette's index; a request body whose history extends an earlier one is stored
    shortened, with the reference that restores it. `connection`: for an exchange of WebSocket messages, the
    id of the first exchange on its connection (its own id for the first). `places`: where the client ran.
    `bodies`: the JSON of its bodies, when the caller parsed them already (`Bodies.of`)."""
    notes = list(raw.notes)
    said = bodies.request if bodies is not None else None
    request, route = _request(raw.request, redactor, notes, history, exchange_id, said=said)
    parsed = request.body.json_ if isinstance(request.body, JsonBody) else None  # shortened: top level intact
    messages = raw.websocket is not None
    answer = bodies.answer if bodies is not None else None
    stream = bodies.stream if bodies is not None else None
    response = (
        _response(raw.response, redactor, route is not None, notes, messages, answer, stream) if raw.response else None
    )
    streaming = route.streaming if route is not None else None
    return build(
        Exchange,
        id=exchange_id,
        provider=route.provider.value if route else None,
        operation=route.operation.value if route else None,
        vendor=route.vendor if route else None,
        model=_model(route, parsed),
        streaming=bool(streaming) if streaming is not None else response is not None and response.events is not None,
        websocket=build(WebSocket, connection=connection or exchange_id) if messages else None,
        request=request,
        response=response,
        error=raw.error,
        timings=build(Timings, started_at=raw.started_at, ttfb_ms=_ms(raw.ttfb_ms), total_ms=_ms(raw.total_ms)),
        notes=notes or None,
        injected=[Injection.model_validate(record) for record in raw.injected] or None,
        places=places,
    )


# the only headers replay reads: the user agent picks the client's preset, an MCP session its own recordings
MATCHED_HEADERS = frozenset({"user-agent", SESSION_HEADER})


def to_request(
    raw: RawRequest, redactor: Redactor, known: tuple[Route | None, Any] | None = None
) -> tuple[Request, Route | None]:
    """A live request as replay matches it against the recordings: as the cassette would store it (redacted,
    body parsed) but with only the headers replay reads (`MATCHED_HEADERS`), so the others cost no
    redaction; and the API it speaks. `known`: its route and parsed body, when the caller has them already
    (the answer chain's `Incoming`), so neither is worked out twice."""
    return _request(raw, redactor, [], None, 0, known, MATCHED_HEADERS)


def _request(
    raw: RawRequest,
    redactor: Redactor,
    notes: list[str],
    history: HistoryIndex | None,
    exchange_id: int,
    known: tuple[Route | None, Any] | None = None,
    kept: frozenset[str] | None = None,
    said: Parsed | None = None,
) -> tuple[Request, Route | None]:
    """`kept`: the only headers (lower-case names) to keep; None keeps them all. `said`: the body's JSON."""
    headers = {name.lower(): value for name, value in raw.headers}
    route, parsed = known or (
        detect(raw.host, raw.path, headers, method=raw.method, scheme=raw.scheme, port=raw.port),
        said.value if said is not None else None,
    )
    extends: Extends | None = None

    def share(value: Any) -> Any:
        """Before redaction: a history already stored is neither stored nor redacted again."""
        nonlocal extends
        if history is None or not isinstance(value, dict):
            return value
        stored, extends = history.share(exchange_id, value)
        return stored

    content_type = headers.get("content-type")
    api = route is not None
    body = _body(raw.body, content_type, redactor, api, "request", notes, share, raw.undecodable, parsed)
    if route is not None and known is None:
        stored = body.json_ if isinstance(body, JsonBody) else None
        route = with_body(route, stored if isinstance(stored, dict) else None)
    request = build(
        Request,
        method=raw.method,
        url=url(raw, redactor),
        http_version=raw.http_version,
        headers=header_lines(
            redactor.headers(raw.headers if kept is None else [(n, v) for n, v in raw.headers if n.lower() in kept])
        ),
        body=body,
        content_encoding=raw.content_encoding,
        extends=extends,
    )
    return request, route


def _response(
    raw: RawResponse,
    redactor: Redactor,
    api: bool,
    notes: list[str],
    messages: bool,
    said: Parsed | None = None,
    payloads: list[Parsed] | None = None,
) -> Response:
    """`messages`: the events are WebSocket messages; `said`: the body's JSON; `payloads`: receives the
    events' JSON payloads (`store_events`)."""
    headers = {name.lower(): value for name, value in raw.headers}
    content_type = headers.get("content-type", "")
    events = None
    if raw.events is not None:
        if raw.undecodable:
            notes.append(f"response stream not decodable ({raw.undecodable}): stored as it arrived, never scanned")
        try:
            events = store_events(
                raw.events, content_type, redactor, raw.undecodable, messages=messages, payloads=payloads
            )
        except Exception as exc:  # never lose an event: keep their bytes
            if payloads:
                payloads.clear()
            logger.warning("could not convert a stream: %s", exc)
            notes.append(f"response events could not be converted ({exc}): stored verbatim")
            if messages:
                events = [store_message(event, redactor) for event in raw.events]
            else:
                events = store_events(raw.events, "application/octet-stream", redactor)
    body = None
    if raw.body is not None:
        parsed = said.value if said is not None else None
        body = _body(raw.body, content_type, redactor, api, "response", notes, None, raw.undecodable, parsed)
    return build(
        Response,
        status=raw.status,
        reason=raw.reason,
        http_version=raw.http_version,
        headers=header_lines(redactor.headers(raw.headers)),
        body=body,
        events=events,
        content_encoding=raw.content_encoding,
    )


def _body(
    data: bytes,
    content_type: str | None,
    redactor: Redactor,
    api: bool,
    where: str,
    notes: list[str],
    shape: Callable[[Any], Any] | None = None,
    undecodable: str | None = None,
    parsed: Any = None,
) -> Body | None:
    if not data:
        return None
    if undecodable:  # still content-encoded: whatever it says was never seen, so it is marked as such
        logger.warning("%s body not decodable (%s): stored as it arrived", where, undecodable)
        notes.append(f"{where} body not decodable ({undecodable}): stored as it arrived, never scanned")
        return Base64Body(base64=base64.b64encode(redactor.data(data)).decode("ascii"), not_decodable=undecodable)
    try:
        expect_json = api or is_json_type(content_type)
        body, note = store_body(data, content_type, redactor, expect_json=expect_json, shape=shape, parsed=parsed)
    except Exception as exc:  # e.g. JSON nested deeper than Python recursion allows
        logger.warning("could not convert a %s body: %s", where, exc)
        body, note = store_verbatim(redactor.data(data)), f"could not be converted ({exc!r}): stored verbatim"
    if note:
        logger.warning("%s body %s", where, note)
        notes.append(f"{where} body {note}")
    return body


def _model(route: Route | None, body: Any) -> str | None:
    if route is not None and route.model:
        return route.model
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        return str(body["model"])
    return None


def _ms(value: float | None) -> float | None:
    return round(value, 3) if value is not None else None
