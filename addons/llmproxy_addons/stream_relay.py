"""The relay door: a loopback HTTP/1.1 server on the proxy's own event loop. It serves two kinds of request:

* replies the proxy door filed under a token (`serve`): mitmproxy cannot emit a timed synthetic stream itself
  (docs/mitmproxy.md#what-llmproxy-relies-on), so a paced reply is fetched from here, through the proxy, and
  sent chunk by chunk on its schedule;
* requests from clients that use it as their base URL: translated into an `Incoming` and answered by the same
  answer chain as the proxy door, without the proxy's cost of interception (about a millisecond of CPU a
  request). The relay cannot forward (it has no origin), so what nothing answers here is refused.

It is also the WebSocket door (addons/websocket_relay.py): a WebSocket the chain answers message by message —
pointed here by the proxy door (`take_websocket`), or opened by a base-URL client — is served here, each request
message an `Incoming` of `Door.WEBSOCKET`.
"""

import asyncio
import itertools
import logging
import re
import socket
from collections import deque
from dataclasses import dataclass, replace

import httptools
from mitmproxy import http

from llmproxy.chain import Chain, Context, Door, Incoming, Reply
from llmproxy.chain.reply import Events, ReplySource, reason_phrase
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.registry import websocket_codec
from llmproxy.providers.routes import detect, is_websocket_upgrade
from llmproxy.providers.websocket import WebSocketCodec
from llmproxy_addons.websocket_relay import RefusedWebSocket, WebSocketSession

logger = logging.getLogger(__name__)

TOKEN_HEADER = "x-llmproxy-relay"
_HOST_PORT = re.compile(r"(.*?)(?::(\d+))?")  # a Host header: name (or [v6 address]) and optional port
MAX_HEAD = 256 * 1024  # a request head larger than this is refused (431); bodies are not limited


class StreamRelay:
    def __init__(self, chain: Chain, port: int = 0) -> None:
        """Listens at once (on `port`, 0: a free one), so `port` is known and clients can connect before the
        proxy's loop starts serving; raises OSError when the port is taken."""
        self.chain = chain
        self.context = Context(Door.RELAY, forwards=False)
        self._socket = socket.create_server(("127.0.0.1", port), backlog=512)
        self.port: int = self._socket.getsockname()[1]
        self._filed: dict[str, Reply] = {}
        self._upgrades: dict[str, RawRequest] = {}  # WebSockets the proxy door pointed here, as the client asked
        self._tokens = itertools.count(1)
        self._server: asyncio.Server | None = None
        self._websocket = Context(Door.WEBSOCKET, forwards=False)

    async def running(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Connection(self), sock=self._socket)

    async def done(self) -> None:
        self.close()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self._socket.close()

    def serve(self, flow: http.HTTPFlow, reply: Reply) -> None:
        """Answer `flow` with `reply`, sent on its schedule."""
        token = str(next(self._tokens))
        self._filed[token] = reply
        flow.request.headers[TOKEN_HEADER] = token
        flow.request.scheme, flow.request.host, flow.request.port = "http", "127.0.0.1", self.port

    def take_websocket(self, flow: http.HTTPFlow, upgrade: RawRequest) -> None:
        """Serve the WebSocket `flow` asks for here; `upgrade` is its request as the client sent it."""
        token = f"ws{next(self._tokens)}"
        self._upgrades[token] = replace(upgrade, scheme="wss" if upgrade.scheme == "https" else "ws")
        flow.request.headers[TOKEN_HEADER] = token
        flow.request.scheme, flow.request.host, flow.request.port = "http", "127.0.0.1", self.port

    def answer(
        self, method: str, target: str, headers: dict[str, str], body: bytes, version: str = "HTTP/1.1"
    ) -> Reply | None:
        """What a request to the relay gets: the reply filed under its token (None for an unknown one), or the
        chain's answer to a base-URL client."""
        token = headers.get(TOKEN_HEADER)
        if token is not None:
            return self._filed.pop(token, None)
        raw = self._request(method, target, headers, body, "http", version)
        return self.chain.answer(Incoming(raw, Door.RELAY), self.context)

    def websocket(self, target: str, headers: dict[str, str]) -> tuple[RawRequest, WebSocketCodec] | None:
        """The upgrade a WebSocket on the relay stands for, and its API's codec; None when nothing here serves it."""
        token = headers.get(TOKEN_HEADER)
        raw = self._upgrades.pop(token, None) if token is not None else self._request("GET", target, headers, b"", "ws")
        if raw is None:
            return None
        codec = websocket_codec(detect(raw.host, raw.path, dict(raw.headers), method=raw.method))
        return (raw, codec) if codec is not None and self.chain.answers else None

    def answer_message(self, request: RawRequest) -> Reply:
        """A request read off a WebSocket, answered by the chain (never forwarded: the WebSocket is here)."""
        reply = self.chain.answer(Incoming(request, Door.WEBSOCKET), self._websocket)
        assert reply is not None  # a door that cannot forward always gets a reply
        return reply

    def _request(
        self, method: str, target: str, headers: dict[str, str], body: bytes, scheme: str, version: str = "HTTP/1.1"
    ) -> RawRequest:
        """A request a client sent to the relay itself."""
        host, port = _HOST_PORT.fullmatch(headers.get("host", "")).groups()  # type: ignore[union-attr]
        return RawRequest(
            method=method,
            scheme=scheme,
            host=host or "127.0.0.1",
            port=int(port) if port else self.port,
            path=target,
            http_version=version,
            headers=tuple(headers.items()),
            body=body,
            content_encoding=headers.get("content-encoding"),
        )


@dataclass(slots=True)
class _Request:
    """A request read whole off a connection, waiting for its answer."""

    method: str
    target: str
    old: bool  # HTTP/1.0
    headers: dict[str, str]  # lower-case names
    raw_headers: list[tuple[bytes, bytes]]  # as sent, for a WebSocket handshake
    body: bytes
    keep_alive: bool  # the connection serves on after the answer: HTTP/1.1 without `Connection: close`
    upgrade: bool  # it asked to leave HTTP (a WebSocket)


class _Connection(asyncio.Protocol):
    """One client connection to the relay. `httptools` (llhttp, Node's HTTP parser) reads its requests —
    keep-alive, `Connection: close`, HTTP/1.0 clients, pipelining, chunked uploads, `Expect: 100-continue` —
    and the relay writes its answers, each in one piece, in the order the requests came. A protocol rather than
    streams: an answer with nothing to wait for is written from `data_received` at once, in one write, which
    costs a fraction of a stream reader and writer."""

    def __init__(self, relay: StreamRelay) -> None:
        self.relay = relay
        self.parser = httptools.HttpRequestParser(self)
        self.waiting: deque[_Request] = deque()  # read whole, not answered yet (pipelined behind an answer)
        self.broken: tuple[int, str] | None = None  # why what follows the waiting requests cannot be read
        self.upgraded = False  # an upgrade request was read: the parser reads no more
        self.rest = b""  # what followed it: the WebSocket's first bytes
        self.transport: asyncio.Transport | None = None
        self.sending: asyncio.Task[None] | None = None  # a timed answer under way: later requests wait
        self.socket: WebSocketSession | RefusedWebSocket | None = None  # once the connection became a WebSocket
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        self._head_size = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.socket is not None:
            self.socket.receive(data)
            return
        if self.broken is None and not self.upgraded:
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserUpgrade as upgrade:
                self.upgraded, self.rest = True, data[upgrade.args[0] :]
            except httptools.HttpParserError as error:
                self.broken = self.broken or (400, str(error) or type(error).__name__)
        self._answer_waiting()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.sending is not None:
            self.sending.cancel()
        if self.socket is not None:
            self.socket.close()

    # httptools' callbacks, in the order it makes them for each request

    def on_message_begin(self) -> None:
        self._url, self._headers, self._body, self._head_size = b"", [], [], 0

    def on_url(self, url: bytes) -> None:
        self._url += url
        self._measure(len(url))

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))
        self._measure(len(name) + len(value) + 4)

    def on_headers_complete(self) -> None:
        transport = self.transport
        assert transport is not None
        if self.sending is None and not self.waiting:  # nothing else to say first: curl waits a second for this
            for name, value in self._headers:
                if name.lower() == b"expect" and value.lower() == b"100-continue":
                    transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        parser = self.parser
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in self._headers}
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        old = parser.get_http_version() == "1.0"
        self.waiting.append(
            _Request(
                parser.get_method().decode("latin-1"),
                self._url.decode("latin-1"),
                old,
                headers,
                self._headers,
                body,
                parser.should_keep_alive() and not old,  # an HTTP/1.0 client is served one request
                parser.should_upgrade(),
            )
        )

    def _measure(self, size: int) -> None:
        self._head_size += size
        if self._head_size > MAX_HEAD:
            self.broken = (431, f"a request head of over {MAX_HEAD:,} bytes")
            raise ValueError(self.broken[1])  # stops the parser

    def _answer_waiting(self) -> None:
        transport = self.transport
        assert transport is not None
        while self.sending is None and self.socket is None and not transport.is_closing():
            if self.waiting:
                self._answer(self.waiting.popleft())
            elif self.broken is not None:  # the client learns why; nothing after it can be trusted
                status, why = self.broken
                message = f"llmproxy: malformed request: {why}\n".encode()
                transport.write(b"HTTP/1.1 %d %s\r\nconnection: close\r\n" % (status, reason_phrase(status).encode()))
                transport.write(b"content-length: %d\r\n\r\n%s" % (len(message), message))
                transport.close()
            else:
                return

    def _answer(self, request: _Request) -> None:
        transport = self.transport
        assert transport is not None
        method, target, headers = request.method, request.target, request.headers
        upgrade_asked = request.upgrade and is_websocket_upgrade(method, headers)
        if upgrade_asked and (upgrade := self.relay.websocket(target, headers)):
            self.socket = WebSocketSession(
                transport, request.raw_headers, target, self.rest, *upgrade, self.relay.answer_message
            )
            return
        closing = not request.keep_alive or request.upgrade  # after an upgrade request, the parser reads no more
        ending = "\r\nconnection: close" if closing else ""
        reply = self.relay.answer(method, target, headers, request.body, "HTTP/1.0" if request.old else "HTTP/1.1")
        if reply is not None and reply.source is ReplySource.MISS and upgrade_asked:  # told on the WebSocket
            self.socket = RefusedWebSocket(transport, request.raw_headers, target, self.rest, reply)
            return
        if reply is None:
            transport.write(f"HTTP/1.1 404 Not Found\r\ncontent-length: 0{ending}\r\n\r\n".encode())
        elif reply.drop:  # no answer at all
            transport.close()
            return
        elif reply.events is None or not reply.relayed:  # nothing to wait for: one write, framed by its length
            data = reply.data
            head = _head(reply, f"content-length: {len(data)}{ending}")
            transport.write(head if method == "HEAD" else head + data)
        else:  # chunked, but to an HTTP/1.0 client (which cannot read chunks) unframed, ended by closing
            self.sending = asyncio.ensure_future(self._send_timed(reply, reply.events, not request.old, closing))
            return
        if closing:
            transport.close()  # once what was written has gone out

    async def _send_timed(self, reply: Reply, events: Events, chunked: bool, closing: bool) -> None:
        transport = self.transport
        assert transport is not None
        loop = asyncio.get_running_loop()
        start = loop.time()
        framing = "transfer-encoding: chunked" if chunked else "connection: close"
        transport.write(_head(reply, framing + ("\r\nconnection: close" if closing and chunked else "")))
        for at, chunk in events:
            delay = start + at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if chunk:
                transport.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
        self.sending = None
        if reply.cut:  # no last chunk: the connection drops mid-answer, once what was written has gone
            transport.close()
            return
        if chunked:
            transport.write(b"0\r\n\r\n")
        if closing or not chunked:
            transport.close()
            return
        self._answer_waiting()


def _head(reply: Reply, framing: str) -> bytes:
    lines = [f"HTTP/1.1 {reply.status} {reply.phrase}", *(f"{n}: {v}" for n, v in reply.headers), framing]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
