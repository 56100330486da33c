"""Recorded WebSocket exchanges read whole, as replay matches them.

A request on a WebSocket may name an earlier answer on the same connection and send only what is new since
(Responses' `previous_response_id`). The cassette keeps each message as it was sent; replay matches the request
it stands for, read whole by the API's `WebSocketCodec` — the same reading a live connection gets — so a
request matches its recording whether or not the client sent it whole, and no id from one run has to equal
an id from another.
"""

from collections.abc import Iterator
from typing import Any

from llmproxy.cassette.bodies import event_bytes
from llmproxy.cassette.model import Exchange, JsonBody, MessageEvent, Request
from llmproxy.cassette.recorded import Recorded
from llmproxy.model import Operation, Provider, Route
from llmproxy.providers.registry import websocket_codec
from llmproxy.providers.websocket import Connection, parsed


def matched_requests(exchanges: Recorded) -> Iterator[Request]:
    """Each exchange's request as replay matches it (`exchanges` in recorded order): an HTTP request as it
    is, a WebSocket message read whole where its connection allows (else as it was sent); each as soon as it is
    read, while the cassette loads."""
    connections: dict[int, Connection] = {}
    for position in exchanges.positions():
        if not exchanges.on_websocket(position):
            yield exchanges.request(position)
            continue
        exchange = exchanges[position]
        codec = websocket_codec(_route(exchange)) if exchange.websocket is not None else None
        body = exchange.request.body
        if codec is None or exchange.websocket is None or not isinstance(body, JsonBody):
            yield exchange.request
            continue
        connection = connections.setdefault(exchange.websocket.connection, codec.connection())
        whole = connection.request(body.json_)
        connection.answered(answer_events(exchange))
        yield exchange.request if whole is None else exchange.request.model_copy(update={"body": JsonBody(json=whole)})


def answer_events(exchange: Exchange) -> list[Any]:
    """The messages that answered a WebSocket exchange, parsed (None for those that are not JSON)."""
    events = exchange.response.events if exchange.response is not None else None
    return [event.message if isinstance(event, MessageEvent) else parsed(event_bytes(event)) for event in events or ()]


def _route(exchange: Exchange) -> Route | None:
    try:
        return Route(Provider(exchange.provider or ""), Operation(exchange.operation or ""), True, websocket=True)
    except ValueError:  # none, or an API this version of llmproxy does not know
        return None
