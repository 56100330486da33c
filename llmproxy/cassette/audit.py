"""Auditing exchanges as llmproxy holds them (`providers.audit`): a captured one, whose bodies are exact, or
one read from a cassette, whose bodies are stored (JSON re-serialised compactly, histories restored)."""

from collections.abc import Iterable
from dataclasses import replace

import orjson

from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.decode import exchange_route
from llmproxy.cassette.model import Exchange
from llmproxy.cassette.redact import Redactor
from llmproxy.model import Route
from llmproxy.model.exchange import RawExchange
from llmproxy.providers.audit import Answer, Audit, audit, tally
from llmproxy.providers.routes import detect, with_body


def audit_captured(raw: RawExchange, redactor: Redactor) -> Audit | None:
    """A captured exchange, decoded as it crossed the wire; None when it is not an API llmproxy reads. What
    a failure quotes of the exchange is redacted, as the cassette is."""
    request = raw.request
    headers = {name.lower(): value for name, value in request.headers}
    route = detect(request.host, request.path, headers, method=request.method, port=request.port)
    if route is None or request.undecodable is not None:
        return None
    response = raw.response
    answer = None
    if response is not None and response.undecodable is None:
        events = None if response.events is None else [event.data for event in response.events]
        answer = Answer(response.status, response.body, events)
    result = audit(_settled(route, request.body), request.body, answer)
    if result is None or not result.failures:
        return result
    scrubbed = [replace(f, message=redactor.text(f.message), excerpt=redactor.text(f.excerpt)) for f in result.failures]
    return replace(result, failures=tuple(scrubbed))


def audit_stored(exchange: Exchange) -> Audit | None:
    """A cassette's exchange (its history restored: `load_cassette` does it)."""
    request = exchange.request
    route = exchange_route(exchange)
    if route is None:
        return None
    body = body_bytes(request.body) if request.body is not None else b""
    response = exchange.response
    answer = None
    if response is not None:
        events = None if response.events is None else [event_bytes(event) for event in response.events]
        data = body_bytes(response.body) if response.body is not None else None
        answer = Answer(response.status, data, events)
    return audit(_settled(route, body), body, answer)


def decode_summary(exchanges: Iterable[Exchange]) -> list[str]:
    """The end-of-run lines about what of these exchanges llmproxy's codecs could not read (none when all)."""
    return tally((f"exchange {exchange.id}", audit_stored(exchange)) for exchange in exchanges).lines()


def _settled(route: Route, body: bytes) -> Route:
    try:
        parsed = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        parsed = None
    return with_body(route, parsed if isinstance(parsed, dict) else None)
