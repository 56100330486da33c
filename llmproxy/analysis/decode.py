"""A recorded exchange as a report reads it: the chain's `decode_exchange`, plus what a report row needs
beside it — the API and host it went to, how much history it shares with an earlier request, why it failed.

`decode_exchange` reads a request as stored: when the cassette shares a conversation's history (`extends`),
only the items after the shared prefix are decoded, and `shared_items` says how many came before. A report
over a long agent session therefore costs what the session says once, not what it re-sent every turn.
"""

import functools
from dataclasses import dataclass
from urllib.parse import urlsplit

from llmproxy.cassette.decode import decode_exchange, decode_request, exchange_route
from llmproxy.cassette.model import Exchange
from llmproxy.errors import UnsupportedError
from llmproxy.model import Completion, Conversation, Route, Usage
from llmproxy.providers.registry import chat_codec


@dataclass(slots=True)  # built for every exchange and only read: not frozen, which would cost three times as much
class ChatExchange:
    route: Route
    host: str
    path: str
    conversation: Conversation  # with a shared history: only the items after `shared_items`
    completion: Completion | None  # None: no response, or an error status
    usage: Usage | None
    shared_items: int  # history items this request re-sent from exchange `extends`
    extends: int | None
    error: str | None  # why there is no completion: the upstream's error, a status, a failed connection


class Routes:
    """The API each recorded request speaks, detected once per method, URL and headers: a recording repeats
    the same few (the last 256 are remembered)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str, tuple[str, ...]], Route | None] = {}

    def of(self, exchange: Exchange) -> Route | None:
        request = exchange.request
        key = (request.method, request.url, tuple(request.headers))
        if key not in self._known:
            if len(self._known) >= _KEPT_ROUTES:
                self._known.clear()
            self._known[key] = exchange_route(exchange)
        return self._known[key]


_KEPT_ROUTES = 256


def read_chat(exchange: Exchange, routes: Routes | None = None) -> ChatExchange | str:
    """The exchange decoded, or why it is not a chat call a report counts (a short reason)."""
    route = routes.of(exchange) if routes is not None else exchange_route(exchange)
    try:
        conversation, completion, usage = decode_exchange(exchange, route)
    except UnsupportedError:
        return "not a chat API"
    except ValueError:  # ParseError, or a stored body that is not what it claims
        return "undecodable request" if _request_fails(exchange) else "undecodable response"
    assert route is not None  # decode_exchange found the chat API it speaks
    host, path = _host_and_path(exchange.request.url)
    extends = exchange.request.extends
    shared, parent = (extends.items, extends.exchange) if extends is not None else (0, None)
    response = exchange.response
    if response is None or completion is None:
        error = exchange.error or "no response"
        return ChatExchange(route, host, path, conversation, None, None, shared, parent, error)
    failed = completion.error
    if response.status >= 400 and failed is not None:
        reason = f"status {response.status}" + (f": {failed.message}" if failed.message else "")
        return ChatExchange(route, host, path, conversation, None, None, shared, parent, reason)
    message = failed.message if failed is not None else None
    return ChatExchange(route, host, path, conversation, completion, usage, shared, parent, message)


@functools.lru_cache(maxsize=256)
def _host_and_path(url: str) -> tuple[str, str]:
    """Split once per URL: a recording sends thousands of calls to the same few."""
    parts = urlsplit(url)
    return parts.hostname or "", parts.path


def _request_fails(exchange: Exchange) -> bool:
    """Whether it is the request that does not decode (asked only of an exchange that failed to)."""
    route = exchange_route(exchange)
    codec = chat_codec(route) if route is not None else None
    try:
        if codec is not None:
            decode_request(codec, exchange.request)
    except ValueError:
        return True
    return False
