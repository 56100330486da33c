"""HTTP/1.1 served on one client connection, straight into the answer chain: the relay's (a client set by base
URL, a paced reply the proxy door filed there) and the lean door's (a request through the proxy that nothing
upstream needs to answer). `httptools` (llhttp, Node's HTTP parser) reads the requests; a WebSocket the server
takes is handed to `websocket_relay`. No mitmproxy here: a replay or a mock the lean door serves never imports it.
"""

import asyncio
import logging
import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import httptools

from llmproxy.chain import Reply
from llmproxy.chain.reply import Events, ReplySource, reason_phrase
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.routes import is_websocket_upgrade
from llmproxy.providers.websocket import WebSocketCodec

if TYPE_CHECKING:  # wsproto is imported with the first WebSocket
    from llmproxy_addons.websocket_relay import RefusedWebSocket, WebSocketSession

logger = logging.getLogger(__name__)

MAX_HEAD = 256 * 1024  # a request head larger than this is refused (431); bodies are not limited


@dataclass(slots=True)
class ParsedRequest:
    """A request read whole off a connection, waiting for its answer."""

    method: str
    target: str
    old: bool  # HTTP/1.0
    headers: dict[str, str]  # lower-case names
    raw_headers: list[tuple[bytes, bytes]]  # as sent, for a WebSocket handshake
    body: bytes
    keep_alive: bool  # the connection serves on after the answer: HTTP/1.1 without `Connection: close`
    upgrade: bool  # it asked to leave HTTP (a WebSocket)
    started: float = 0.0  # when its first byte was read (seconds since the epoch)

    @property
    def version(self) -> str:
        return "HTTP/1.0" if self.old else "HTTP/1.1"


def close_server(server: asyncio.Server) -> None:
    """Stop `server` listening and close the connections it still serves (keep-alive clients): the loop they
    are served on is ending. (Python 3.12 has no `close_clients`: they close with the loop.)"""
    server.close()
    if sys.version_info >= (3, 13):
        server.close_clients()


class Passed(Protocol):
    """A request the server sends on rather than answers: upstream (the lean door, recording), or to mitmproxy
    (a WebSocket it records)."""

    async def send(self, connection: "HttpConnection", request: ParsedRequest) -> bool:
        """Send `request` on and its answer back on `connection`; True when the connection then serves on."""
        ...

    def abandon(self) -> None:
        """The client went away before the answer was whole."""
        ...

    def hold(self, held: bool) -> None:
        """The client reads slower than the answer comes (True): stop reading it until it catches up (False)."""
        ...


class Pipe(Protocol):
    """Where the bytes a client sends go once its connection has left HTTP (None: it sends no more)."""

    def receive(self, data: bytes | None) -> None: ...

    def close(self) -> None: ...


class Server(Protocol):
    """What a connection asks about the requests it reads: the relay (a base-URL client, a reply the proxy door
    filed) or the lean door (a request through the proxy, `lean_door.py`)."""

    def answer_request(self, request: ParsedRequest) -> Reply | Passed | None:
        """The reply to `request` (None: the connection answers 404), or how it goes upstream (the lean door,
        recording)."""
        ...

    def websocket_for(self, request: ParsedRequest) -> tuple[RawRequest, WebSocketCodec] | None:
        """The upgrade and its API's codec when the WebSocket `request` asks for is served here message by
        message; None: `answer_request` answers the upgrade request."""
        ...

    def answer_message(self, request: RawRequest) -> Reply:
        """A request read off a WebSocket served here."""
        ...


class HttpConnection(asyncio.Protocol):
    """One client connection to the relay or the lean door. `httptools` (llhttp, Node's HTTP parser) reads its
    requests — keep-alive, `Connection: close`, HTTP/1.0 clients, pipelining, chunked uploads, `Expect:
    100-continue` — and the answers are written, each in one piece, in the order the requests came. A protocol
    rather than streams: an answer with nothing to wait for is written from `data_received` at once, in one
    write, which costs a fraction of a stream reader and writer."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.parser = httptools.HttpRequestParser(self)
        self.waiting: deque[ParsedRequest] = deque()  # read whole, not answered yet (pipelined behind an answer)
        self.broken: tuple[int, str] | None = None  # why what follows the waiting requests cannot be read
        self.upgraded = False  # an upgrade request was read: the parser reads no more
        self.rest = b""  # what followed it: the WebSocket's first bytes
        self.transport: asyncio.Transport | None = None
        self.sending: asyncio.Task[None] | None = None  # a timed answer under way: later requests wait
        self.passed: Passed | None = None  # the request sent on now, when `sending` sends it
        self.ended = False  # the client half-closed: close once everything read is answered
        # once the connection became a WebSocket (or was handed on whole)
        self.socket: WebSocketSession | RefusedWebSocket | Pipe | None = None
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        self._head_size = 0
        self._started = 0.0

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

    def eof_received(self) -> bool:
        """The client sends no more (a half-close): what it asked is still answered, then the connection closes.
        (Over TLS there is no half-close: the connection closes at once.)"""
        self.ended = True
        return self.socket is None and (self.sending is not None or bool(self.waiting))

    def connection_lost(self, exc: Exception | None) -> None:
        if self.passed is not None:  # the upstream's answer is let go of, and the taps told why
            self.passed.abandon()
        elif self.sending is not None:
            self.sending.cancel()
        if self.socket is not None:
            self.socket.close()

    def pause_writing(self) -> None:
        if self.passed is not None:
            self.passed.hold(True)

    def resume_writing(self) -> None:
        if self.passed is not None:
            self.passed.hold(False)

    # httptools' callbacks, in the order it makes them for each request

    def on_message_begin(self) -> None:
        self._url, self._headers, self._body, self._head_size = b"", [], [], 0
        self._started = time.time()

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
            ParsedRequest(
                parser.get_method().decode("latin-1"),
                self._url.decode("latin-1"),
                old,
                headers,
                self._headers,
                body,
                parser.should_keep_alive() and not old,  # an HTTP/1.0 client is served one request
                parser.should_upgrade(),
                self._started,
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
                if self.ended:
                    transport.close()
                return

    def _answer(self, request: ParsedRequest) -> None:
        transport = self.transport
        assert transport is not None
        method, target, headers = request.method, request.target, request.headers
        upgrade_asked = request.upgrade and is_websocket_upgrade(method, headers)
        if upgrade_asked and (upgrade := self.server.websocket_for(request)):
            from llmproxy_addons.websocket_relay import WebSocketSession

            self.socket = WebSocketSession(
                transport, request.raw_headers, target, self.rest, *upgrade, self.server.answer_message
            )
            return
        closing = not request.keep_alive or request.upgrade  # after an upgrade request, the parser reads no more
        ending = "\r\nconnection: close" if closing else ""
        reply = self.server.answer_request(request)
        if reply is not None and not isinstance(reply, Reply):  # it goes upstream: answered as it comes
            self.sending = asyncio.ensure_future(self._pass(reply, request))
            return
        if reply is not None and reply.source is ReplySource.MISS and upgrade_asked:  # told on the WebSocket
            from llmproxy_addons.websocket_relay import RefusedWebSocket

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

    async def _pass(self, passed: Passed, request: ParsedRequest) -> None:
        transport = self.transport
        assert transport is not None
        serves_on = False
        self.passed = passed
        try:
            serves_on = await passed.send(self, request)
        except Exception:
            logger.exception("llmproxy: %s %s could not be sent on", request.method, request.target)
        finally:
            self.sending = self.passed = None
            if not serves_on and self.socket is None:
                transport.close()
        if serves_on:
            self._answer_waiting()


def _head(reply: Reply, framing: str) -> bytes:
    lines = [f"HTTP/1.1 {reply.status} {reply.phrase}", *(f"{n}: {v}" for n, v in reply.headers), framing]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
