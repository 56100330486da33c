"""Linking the exchanges of a Responses background run as they are recorded: the create (`background: true`,
answered `queued` with the response's id), then each request that names that id — the polls of
`GET /responses/{id}` until a terminal status, a stream resumed with `?stream=true&starting_after=N`, cancel,
delete, input items. Each gets `background: {response_id, create}`, `create` the create's exchange id, so a
reader of the cassette (the report, `to-expectations`, a person) sees one logical run without decoding bodies.
"""

from typing import Any, Final
from urllib.parse import urlsplit

from llmproxy.cassette.model import Background, Exchange, JsonBody, SseEvent, build
from llmproxy.model import Operation

_CREATE: Final = Operation.RESPONSES.value
_NAMING: Final = frozenset(
    op.value
    for op in (
        Operation.RESPONSE_RETRIEVE,
        Operation.RESPONSE_CANCEL,
        Operation.RESPONSE_DELETE,
        Operation.RESPONSE_INPUT_ITEMS,
    )
)


class BackgroundLinks:
    """The background runs of one cassette: response id → the id of the exchange that created it."""

    def __init__(self) -> None:
        self._creates: dict[str, int] = {}

    def link(self, exchange: Exchange) -> Exchange:
        """The exchange with its `background` link when it belongs to a run (creates are remembered)."""
        if exchange.background is not None:  # already linked (a cassette read back): remember its create
            self._creates.setdefault(exchange.background.response_id, exchange.background.create)
            return exchange
        if exchange.operation == _CREATE and _asks_background(exchange):
            response_id = _created_id(exchange)
            if response_id is None:
                return exchange
            self._creates[response_id] = exchange.id
            return _with(exchange, response_id, exchange.id)
        if exchange.operation in _NAMING:
            response_id = _named_id(exchange.request.url)
            create = self._creates.get(response_id) if response_id else None
            if response_id and create is not None:
                return _with(exchange, response_id, create)
        return exchange


def _with(exchange: Exchange, response_id: str, create: int) -> Exchange:
    return exchange.model_copy(update={"background": build(Background, response_id=response_id, create=create)})


def _asks_background(exchange: Exchange) -> bool:
    body = exchange.request.body
    return isinstance(body, JsonBody) and isinstance(body.json_, dict) and body.json_.get("background") is True


def _created_id(exchange: Exchange) -> str | None:
    """The id the create's answer gave: its body's `id`, or a stream's first event's `response.id`."""
    response = exchange.response
    if response is None or response.status >= 400:
        return None
    if isinstance(response.body, JsonBody):
        return _id(response.body.json_)
    for event in response.events or ():
        if isinstance(event, SseEvent) and isinstance(event.data, dict):
            return _id(event.data.get("response"))
    return None


def _id(value: Any) -> str | None:
    found = value.get("id") if isinstance(value, dict) else None
    return found if isinstance(found, str) and found else None


def _named_id(url: str) -> str | None:
    """The response id in `…/responses/{id}[/cancel|/input_items]`."""
    segments = urlsplit(url).path.split("/")
    for position, segment in enumerate(segments[:-1]):
        if segment == "responses" and segments[position + 1]:
            return segments[position + 1]
    return None
