"""A recorded exchange read back as what it means: the conversation that was sent, the completion that came
back, and its token usage — one reading for every part that looks into cassettes (`cassette to-expectations`,
reports, the meter), through the codec of the API the exchange speaks.

An error answer (an upstream 4xx/5xx) is a completion with nothing but its `error` (the provider's kind and
message, with the status); an exchange whose upstream never answered has no completion. An exchange on a
WebSocket reads its request message and the messages that answered it (a request that names an earlier
answer on its connection is read as it was sent: `cassette.websocket.matched_requests` reads it whole). A
request is read as stored: one whose history the cassette shares with an earlier request's (`extends`)
gives only the messages after the shared prefix, unless the exchange was inflated (`load_cassette`).
"""

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple
from urllib.parse import urlsplit

from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.model import Exchange, JsonBody, Request, Response, header_pairs
from llmproxy.errors import UnsupportedError
from llmproxy.model import Completion, Conversation, Route, Usage
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.node import Parsed
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect


class Decoded(NamedTuple):
    conversation: Conversation
    completion: Completion | None  # None when the upstream never answered
    usage: Usage | None  # as the provider reported it; None when it did not


def decode_exchange(exchange: Exchange, route: Route | None = None) -> Decoded:
    """The exchange's conversation, completion and usage. Raises `UnsupportedError` for an exchange that is
    not a chat API's (embeddings, token counting, non-LLM traffic) and `ParseError` (a `ValueError`) for
    bodies that are not what their API sends. `route`: its `exchange_route`, when the caller has it already."""
    route = route or exchange_route(exchange)
    codec = chat_codec(route) if route is not None else None
    if route is None or codec is None:
        what = f"{route.provider.value} {route.operation.value}" if route is not None else "not an LLM API"
        raise UnsupportedError(f"exchange {exchange.id} is not a chat exchange ({what})")
    conversation = decode_request(codec, exchange.request)
    if exchange.response is None:
        return Decoded(conversation, None, None)
    completion = decode_response(codec, exchange.response)
    return Decoded(conversation, completion, completion.usage)


def exchange_route(exchange: Exchange) -> Route | None:
    """The API a recorded request speaks, detected as a live one is."""
    request = exchange.request
    url = urlsplit(request.url)
    headers = {name.lower(): value for name, value in header_pairs(request.headers)}
    path = url.path + (f"?{url.query}" if url.query else "")
    return detect(url.hostname or "", path, headers, method=request.method, scheme=url.scheme, port=url.port)


def decode_request(codec: ChatCodec, request: Request) -> Conversation:
    """A recorded request as the conversation it sent, read as stored: a body stored with a shared history
    (`request.extends`) gives only the messages after the shared prefix (`history.inflate` rebuilds the whole
    body), so a reader of a long agent session decodes each message once, not once per turn. A JSON body is
    read as the parsed value it already is. Raises `ParseError` (a `ValueError`)."""
    if isinstance(request.body, JsonBody):
        return codec.decode_request(Parsed(request.body.json_))
    return codec.decode_request(body_bytes(request.body) if request.body is not None else b"")


def decode_response(codec: ChatCodec, response: Response) -> Completion:
    """A recorded answer as a completion: the stream reassembled, or the body read (a JSON body as the parsed
    value it already is); an error status gives a completion carrying only the provider's error."""
    if response.events is None and response.status < 400 and isinstance(response.body, JsonBody):
        return codec.decode_response(Parsed(response.body.json_))
    events = [event_bytes(event) for event in response.events] if response.events is not None else None
    body = body_bytes(response.body) if response.body is not None else b""
    return decode_answer(codec, response.status, body, events)


def decode_answer(codec: ChatCodec, status: int, body: bytes, events: Sequence[bytes] | None) -> Completion:
    """An answer on the wire as a completion: its wire `events` when it streamed, else its `body`."""
    if status >= 400:
        data = b"".join(events) if events is not None else body
        return Completion(stop_reason=None, error=replace(codec.decode_error(status, data), status=status))
    if events is not None:
        return codec.decode_stream(iter(events))
    return codec.decode_response(body)
