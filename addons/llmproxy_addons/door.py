"""The proxy door: the one mitmproxy addon between flows and the answer chain
(docs/architecture.md#one-chain-three-doors).

It translates a flow into an `Incoming`, asks the chain, and applies what comes back: a `Reply` becomes the
flow's response (a paced stream goes through the loopback relay, which alone can keep its timing); None
sends the request upstream (`--map`, reverse listeners' path prefixes), and the chain's taps then see the
answer as it comes — a stream piece by piece without buffering, a plain body whole. It decides nothing.

`flow.metadata["llmproxy.source"]` says what answered (mock, cassette, fault, miss, error, upstream; a WebSocket
the chain answers message by message on the relay: relayed).
"""

import asyncio
import copy
import time
from collections.abc import Awaitable, Callable
from typing import Final

from mitmproxy import ctx, http

from llmproxy.chain import (
    Chain,
    Context,
    CutStream,
    Door,
    Forwarding,
    Incoming,
    Observers,
    Reply,
    ReplySource,
    ResponseHead,
)
from llmproxy.chain.incoming import Upstream
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.routes import is_websocket_upgrade
from llmproxy_addons.flows import raw_exchange, raw_request
from llmproxy_addons.stream_relay import StreamRelay
from llmproxy_addons.upstreams import Upstreams

SOURCE = "llmproxy.source"  # flow.metadata: what answered (a `ReplySource` value)
_INCOMING = "llmproxy.incoming"  # flow.metadata: the request as the chain saw it, for the taps
_OBSERVERS = "llmproxy.observers"  # flow.metadata: the taps watching the upstream's answer
_KEPT: Final = 1024  # shared replies whose mitmproxy response the door keeps (more: it starts again)


class ProxyDoor:
    def __init__(self, chain: Chain, relay: StreamRelay | None = None, upstreams: Upstreams | None = None) -> None:
        self.chain = chain
        self.relay = relay
        self.upstreams = upstreams or Upstreams({})
        self.context = Context(Door.PROXY)
        # id of a shared reply → the reply and its mitmproxy response: while the reply is kept here, no other
        # object can have its id
        self._responses: dict[int, tuple[Reply, http.Response]] = {}

    def request(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        if flow.response is not None or SOURCE in flow.metadata:  # answered already (another addon; a replay)
            return None
        live = flow.request
        upstream = Upstream(live.host, live.port, (live.host_header, flow.client_conn.sni))
        incoming = Incoming(raw_request(live), Door.PROXY, upstream)
        if self.relay is not None and self.chain.serves_websocket(incoming):  # answered message by message there
            flow.metadata[SOURCE] = ReplySource.RELAYED.value
            self.relay.take_websocket(flow, incoming.raw)
            return None
        reply = self.chain.answer(incoming, self.context)
        if reply is None:
            flow.metadata[SOURCE] = ReplySource.UPSTREAM.value
            flow.metadata[_INCOMING] = incoming
            self.upstreams.request(flow)
            return _forwarded(flow, incoming.forwarding) if incoming.forwarding is not None else None
        flow.metadata[SOURCE] = reply.source.value
        if reply.drop:
            flow.kill()  # no answer: the client's connection closes
        elif self.relay is not None and (reply.relayed or _refused_websocket(reply, incoming)):
            self.relay.serve(flow, reply)  # a refused WebSocket is told why on the WebSocket, there
        else:
            flow.response = self._response(reply)
        return None

    def http_connect_upstream(self, flow: http.HTTPFlow) -> None:
        """The CONNECT opening a tunnel through the environment's proxy, for a request sent upstream."""
        self.upstreams.http_connect_upstream(flow)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        response = flow.response
        assert response is not None
        incoming: Incoming | None = flow.metadata.get(_INCOMING)
        if incoming is None:  # answered here (a relayed reply among them): nothing watches it
            response.stream = True
            return
        if incoming.forwarding is not None and 200 <= response.status_code < 300:
            for name, value in incoming.forwarding.answer_headers:
                response.headers[name] = value
        headers = tuple(response.headers.items(multi=True))
        head = ResponseHead.of(incoming, response.status_code, headers, flow.request.timestamp_start)
        observers = self.chain.observe(incoming, head)
        if observers is None:
            response.stream = True  # nothing needs the body: it passes as it comes
            return
        flow.metadata[_OBSERVERS] = observers
        if head.streamed:
            response.stream = _tap(flow, observers)  # else buffered, and seen whole at the end

    def response(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        return self._end(flow, None)

    def error(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        return self._end(flow, flow.error.msg if flow.error else "unknown error")

    def _end(self, flow: http.HTTPFlow, error: str | None) -> Awaitable[None] | None:
        """The exchange's end shown to its observers, which the flow waits for (the recorder's full queue holds
        it there); None when nothing watches it."""
        incoming: Incoming | None = flow.metadata.pop(_INCOMING, None)
        if incoming is None:  # answered here: nothing came from the upstream
            return None
        try:
            seen = self._observed_end(flow, incoming, error)
        except BaseException:
            self.chain.ended(incoming)
            raise
        if seen is None:
            self.chain.ended(incoming)
            return None
        return self._ended_once(seen, incoming)

    async def _ended_once(self, seen: Awaitable[None], incoming: Incoming) -> None:
        """The chain told the request has ended only once its observers have seen the end: who waits for that
        (the pytest plugin, before it judges a test's recording) then reads what they made of it."""
        try:
            await seen
        finally:
            self.chain.ended(incoming)

    def _observed_end(self, flow: http.HTTPFlow, incoming: Incoming, error: str | None) -> Awaitable[None] | None:
        if flow.websocket is not None:
            return None
        observers: Observers | None = flow.metadata.pop(_OBSERVERS, None)
        if observers is None:
            if flow.response is not None:  # answered, and nothing was watching
                return None
            observers = self.chain.observe(incoming, None)  # the upstream failed before answering
            if observers is None:
                return None
        return observers.end(raw_exchange(flow, incoming.raw, None, error))

    def _response(self, reply: Reply) -> http.Response:
        """The reply as a mitmproxy response. One served again and again (a recording) is built once and copied
        after: building one costs ~40 µs (every field type-checked), a copy ~6 µs."""
        if not reply.shared:
            return _made(reply)
        kept = self._responses.get(id(reply))
        if kept is None:
            if len(self._responses) >= _KEPT:  # the cassettes served before this one, say
                self._responses.clear()
            kept = self._responses[id(reply)] = (reply, _made(reply))
        template = kept[1]
        response: http.Response = copy.copy(template)
        response.data = copy.copy(template.data)
        response.data.headers = template.data.headers.copy()
        return response


def sent_upstream(flow: http.HTTPFlow) -> RawRequest | None:
    """The request as the client sent it (before `--map` sent it elsewhere), when it goes upstream; None when
    llmproxy answered it."""
    incoming: Incoming | None = flow.metadata.get(_INCOMING)
    return incoming.raw if incoming is not None else None


def _forwarded(flow: http.HTTPFlow, forwarding: Forwarding) -> Awaitable[None] | None:
    """The request as a stage asked it to go: its headers changed, and held back for `wait` seconds."""
    headers = flow.request.headers
    for name, value in forwarding.request_headers:
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value
    return asyncio.sleep(forwarding.wait) if forwarding.wait > 0 else None


def _tap(flow: http.HTTPFlow, observers: Observers) -> Callable[[bytes], bytes | list[bytes]]:
    """mitmproxy's stream callable: each piece through the observers, in the chain's order. A cut drops the
    client's connection, as a failing server would, once what the cut kept has been sent. Nothing to send is an
    empty list: an empty piece would end a chunked body."""
    cut = False
    nothing: list[bytes] = []

    def tap(chunk: bytes) -> bytes | list[bytes]:
        nonlocal cut
        if cut:
            return nothing
        try:
            chunk = observers.chunk(chunk, time.time())
        except CutStream as stop:
            cut = True
            chunk = stop.keep
            _drop_client_soon(flow)
        return chunk or nothing

    return tap


def _drop_client_soon(flow: http.HTTPFlow) -> None:
    """Drop the client's connection once the piece being handed on has been written (mitmproxy writes it when
    the stream callable returns, on the same turn of its event loop)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # called outside the proxy's loop (a test driving the callable): nothing is pending
        _drop_client(flow)
    else:
        loop.call_soon(_drop_client, flow)


def _drop_client(flow: http.HTTPFlow) -> None:
    """Close the client's connection now (mitmproxy has no public call for it; its proxy server's handlers
    are the ones the proxy thread drains at shutdown)."""
    server = ctx.master.addons.get("proxyserver") if ctx.master is not None else None
    handler = server.connections.get(flow.client_conn.id) if server is not None else None
    if handler is not None:
        handler.close_connection(handler.client)


def _made(reply: Reply) -> http.Response:
    headers = http.Headers([(name.encode("latin-1"), value.encode("latin-1")) for name, value in reply.headers])
    response = http.Response.make(reply.status, reply.data, headers)
    if reply.reason:
        response.reason = reply.reason
    return response


def _refused_websocket(reply: Reply, incoming: Incoming) -> bool:
    """Whether `reply` refuses a WebSocket upgrade: the relay accepts it and says why in an error event."""
    return reply.source is ReplySource.MISS and is_websocket_upgrade(incoming.method, incoming.headers)
