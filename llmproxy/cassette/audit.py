"""Auditing exchanges as llmproxy holds them (`providers.audit`): a captured one, whose bodies are exact, or
one read from a cassette, whose bodies are stored (JSON re-serialised compactly, histories restored).

A recording audits its requests through `RecordingAudit`: an agent re-sends its whole history every turn,
and decoding all of it every turn cost the cassette writer most of its time (a 200 KB history: ~20 ms). A
request whose history extends one already audited (the history sharing says which, `history.py`) decodes
only what is new; what the codecs make of a history is the sum of what they make of its items, each read on
its own (tests/cassette/test_audit.py holds every codec to that over real requests), so the result is the
one a whole decode gives. Anything but a clean decode of the new part is decoded whole again, so a failure
reads as it always did.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Final

import orjson

from llmproxy.cassette.bodies import Bodies, body_bytes, event_bytes
from llmproxy.cassette.decode import exchange_route
from llmproxy.cassette.history import history, parse_path, with_list
from llmproxy.cassette.model import Exchange, Extends
from llmproxy.cassette.redact import Redactor
from llmproxy.model import Route
from llmproxy.model.exchange import RawExchange
from llmproxy.providers.audit import Answer, Audit, RequestRead, audit, read_request, tally
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.node import Parsed
from llmproxy.providers.routes import detect, with_body

type HistoryRead = Callable[[ChatCodec, bytes, dict[str, Any]], RequestRead]
"""How a recording decodes a chat request's JSON object (`RecordingAudit`); the codec, the bytes, the object."""


def audit_captured(
    raw: RawExchange, redactor: Redactor, read: HistoryRead | None = None, parsed: Bodies | None = None
) -> Audit | None:
    """A captured exchange, decoded as it crossed the wire; None when it is not an API llmproxy reads. What
    a failure quotes of the exchange is redacted, as the cassette is. `read`: how a chat request that is a
    JSON object is decoded, when not whole; `parsed`: its bodies' JSON, when the caller parsed them already."""
    request = raw.request
    headers = {name.lower(): value for name, value in request.headers}
    route = detect(request.host, request.path, headers, method=request.method, port=request.port)
    if route is None or request.undecodable is not None:
        return None
    response = raw.response
    answer = None
    if response is not None and response.undecodable is None:
        events = None if response.events is None else [event.data for event in response.events]
        answer_json = parsed.answer if parsed is not None and events is None else None
        payloads = parsed.stream if parsed is not None and events and len(parsed.stream) == len(events) else None
        answer = Answer(response.status, response.body, events, answer_json, payloads)
    body = request.body
    request_json = parsed.request.value if parsed is not None and parsed.request is not None else _parsed(body)

    def decode(chat: ChatCodec) -> RequestRead:
        if read is not None and isinstance(request_json, dict):
            return read(chat, body, request_json)
        return read_request(chat, body, None if request_json is None else Parsed(request_json))

    result = audit(_settled(route, request_json), body, answer, decode)
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
    return audit(_settled(route, _parsed(body)), body, answer)


def decode_summary(exchanges: Iterable[Exchange]) -> list[str]:
    """The end-of-run lines about what of these exchanges llmproxy's codecs could not read (none when all)."""
    return tally((f"exchange {exchange.id}", audit_stored(exchange)) for exchange in exchanges).lines()


@dataclass(frozen=True, slots=True)
class _History:
    """A request's history that decoded cleanly: by which codec, where, how many items, their opaque parts."""

    chat: ChatCodec
    path: tuple[str, ...]
    items: int
    opaque: int


class RecordingAudit:
    """A recording's exchanges, audited in the order they are recorded, each history item decoded once (see
    the module's docstring). Remembers the histories of the last `KEPT` requests (a few numbers each)."""

    KEPT: Final = 4096

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._histories: dict[int, _History] = {}

    def audit(
        self, exchange_id: int, raw: RawExchange, extends: Extends | None, parsed: Bodies | None = None
    ) -> Audit | None:
        """`audit_captured`, for the exchange recorded as `exchange_id` whose history `extends` an earlier
        one's (as the cassette stores it); `parsed`: its bodies' JSON, as the conversion read them."""
        return audit_captured(
            raw,
            self._redactor,
            lambda chat, body, json: self.read(exchange_id, chat, body, json, extends),
            parsed,
        )

    def read(
        self, exchange_id: int, chat: ChatCodec, body: bytes, parsed: dict[str, Any], extends: Extends | None
    ) -> RequestRead:
        """What `read_request(chat, body)` gives, decoding only the history items `extends` does not cover
        when the request it names decoded cleanly (`parsed`: the body's JSON object)."""
        result, found = self._read(chat, body, parsed, extends)
        if found is not None:
            self._histories[exchange_id] = found
            if len(self._histories) > self.KEPT:
                del self._histories[next(iter(self._histories))]
        return result

    def _read(
        self, chat: ChatCodec, body: bytes, parsed: dict[str, Any], extends: Extends | None
    ) -> tuple[RequestRead, _History | None]:
        """The request's decode, and its history's when it decoded cleanly."""
        found = history(parsed)
        if found is None:
            return read_request(chat, body, Parsed(parsed)), None
        path, items = found
        earlier = self._histories.get(extends.exchange) if extends is not None else None
        if (
            earlier is not None
            and extends is not None
            and earlier.chat is chat
            and (earlier.path, earlier.items) == (path, extends.items)
            and parse_path(extends.path) == path
        ):
            new = items[earlier.items :]
            tail = read_request(chat, body, Parsed(with_list(parsed, path, new)))  # the rest of the request too
            new_opaque = _items_opaque(chat, body, parsed, path, tail) if new else 0
            if tail.failure is None and new_opaque is not None:
                return (
                    RequestRead(None, earlier.opaque + tail.opaque),
                    _History(chat, path, len(items), earlier.opaque + new_opaque),
                )
        whole = read_request(chat, body, Parsed(parsed))
        opaque = _items_opaque(chat, body, parsed, path, whole)
        return whole, None if opaque is None else _History(chat, path, len(items), opaque)


def _items_opaque(
    chat: ChatCodec, body: bytes, parsed: dict[str, Any], path: tuple[str, ...], read: RequestRead
) -> int | None:
    """Of a `read` of the request with some items in its history, the opaque parts those items hold: the rest
    of the request (decoded with an empty history) holds the others. None unless both decoded cleanly."""
    if read.failure is not None:
        return None
    rest = read_request(chat, body, Parsed(with_list(parsed, path, [])))
    return None if rest.failure is not None else read.opaque - rest.opaque


def _parsed(body: bytes) -> Any:
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None


def _settled(route: Route, parsed: Any) -> Route:
    return with_body(route, parsed if isinstance(parsed, dict) else None)
