"""A recorded exchange as the analysis reads it: its route, its request, its answer, its usage.

This is the one place that decodes an exchange for reports (when the answer chain's public
`decode_exchange` lands in the core, this module becomes a call to it). It decodes the request *as stored*:
when the cassette shares a conversation's history (`extends`), only the items after the shared prefix are
decoded, and `shared_items` says how many came before. A report over a long agent session therefore costs
what the session says once, not what it re-sent every turn.
"""

from dataclasses import dataclass
from urllib.parse import urlsplit

from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.model import Exchange, JsonBody, header_pairs
from llmproxy.model import Completion, Conversation, Route, Usage
from llmproxy.providers.node import Parsed
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect


@dataclass(frozen=True, slots=True)
class Decoded:
    route: Route
    host: str
    path: str
    conversation: Conversation  # with a shared history: only the items after `shared_items`
    completion: Completion | None  # None: no response, or an error status
    usage: Usage | None
    shared_items: int  # history items this request re-sent from exchange `extends`
    extends: int | None
    error: str | None  # why there is no completion: the upstream's error, a status, a failed connection


def decode_exchange(exchange: Exchange) -> Decoded | str:
    """The exchange decoded, or why it is not a chat call a report counts (a short reason)."""
    request = exchange.request
    url = urlsplit(request.url)
    host = url.hostname or ""
    headers = {name.lower(): value for name, value in header_pairs(request.headers)}
    route = detect(host, url.path + (f"?{url.query}" if url.query else ""), headers, method=request.method)
    codec = chat_codec(route) if route is not None else None
    if route is None or codec is None:
        return "not a chat API"
    try:
        if isinstance(request.body, JsonBody):
            conversation = codec.decode_request(Parsed(request.body.json_))
        else:
            conversation = codec.decode_request(body_bytes(request.body) if request.body is not None else b"")
    except ValueError:  # ParseError, or a stored body that is not what it claims
        return "undecodable request"
    shared = request.extends.items if request.extends is not None else 0
    extends = request.extends.exchange if request.extends is not None else None
    response = exchange.response
    if response is None:
        failure = exchange.error or "no response"
        return Decoded(route, host, url.path, conversation, None, None, shared, extends, failure)
    try:
        if response.status >= 400:
            data = b"".join(event_bytes(e) for e in response.events) if response.events else _body(exchange)
            failed = codec.decode_error(response.status, data)
            reason = f"status {response.status}" + (f": {failed.message}" if failed.message else "")
            return Decoded(route, host, url.path, conversation, None, None, shared, extends, reason)
        if response.events is not None:
            completion = codec.decode_stream(event_bytes(event) for event in response.events)
        else:
            completion = codec.decode_response(_body(exchange))
    except ValueError:
        return "undecodable response"
    error = completion.error.message if completion.error is not None else None
    return Decoded(route, host, url.path, conversation, completion, completion.usage, shared, extends, error)


def _body(exchange: Exchange) -> bytes:
    response = exchange.response
    return body_bytes(response.body) if response is not None and response.body is not None else b""
