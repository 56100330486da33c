"""The relay door: a loopback HTTP/1.1 server on the proxy's own event loop. It serves two kinds of request:

* replies the proxy door filed under a token (`serve`): mitmproxy cannot emit a timed synthetic stream itself
  (mitmproxy-notes.md §3b), so a paced reply is fetched from here, through the proxy, and sent chunk by chunk
  on its schedule;
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
from dataclasses import replace

from mitmproxy import http

from llmproxy.chain import Chain, Context, Door, Incoming, Reply
from llmproxy.chain.reply import Events
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.registry import websocket_codec
from llmproxy.providers.routes import detect, is_websocket_upgrade
from llmproxy.providers.websocket import WebSocketCodec
from llmproxy_addons.websocket_relay import WebSocketSession

logger = logging.getLogger(__name__)

TOKEN_HEADER = "x-llmproxy-relay"
_HOST_PORT = re.compile(r"(.*?)(?::(\d+))?")  # a Host header: name (or [v6 address]) and optional port


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


class _Connection(asyncio.Protocol):
    """One client connection to the relay. A protocol rather than streams: an answer with nothing to wait for
    is written from `data_received` at once, which costs a fraction of a stream reader and writer."""

    def __init__(self, relay: StreamRelay) -> None:
        self.relay = relay
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.sending: asyncio.Task[None] | None = None  # a timed answer under way: later requests wait
        self.continued = False  # "100 Continue" sent for the request being read
        self.socket: WebSocketSession | None = None  # once the connection became a WebSocket

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.socket is not None:
            self.socket.receive(data)
            return
        self.buffer += data
        self._answer_waiting()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.sending is not None:
            self.sending.cancel()
        if self.socket is not None:
            self.socket.close()

    def _answer_waiting(self) -> None:
        while self.sending is None and self.transport is not None and not self.transport.is_closing():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            method, target, version, headers = _request_head(bytes(self.buffer[: end + 4]))
            if is_websocket_upgrade(method, headers) and (upgrade := self.relay.websocket(target, headers)):
                head = bytes(self.buffer)  # the upgrade, and whatever followed it
                self.buffer.clear()
                self.socket = WebSocketSession(self.transport, head, *upgrade, self.relay.answer_message)
                return
            try:
                request = _request_body(self.buffer, end + 4, headers)
            except ValueError as error:  # the client learns why; the connection cannot be trusted after it
                message = f"llmproxy: malformed request: {error}\n".encode()
                self.transport.write(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n")
                self.transport.write(b"content-length: %d\r\n\r\n%s" % (len(message), message))
                self.transport.close()
                return
            if request is None:
                if headers.get("expect", "").lower() == "100-continue" and not self.continued:
                    self.continued = True  # curl waits a second for this before it sends a large body
                    self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                return
            body, consumed = request
            del self.buffer[:consumed]
            self.continued = False
            closing = _closes(version, headers)
            # an HTTP/1.0 client keeps the connection only when the answer says so too
            ending = (
                "\r\nconnection: close" if closing else "\r\nconnection: keep-alive" if version == "HTTP/1.0" else ""
            )
            reply = self.relay.answer(method, target, headers, body, version)
            if reply is None:
                self.transport.write(f"HTTP/1.1 404 Not Found\r\ncontent-length: 0{ending}\r\n\r\n".encode())
            elif reply.drop:  # no answer at all
                self.transport.close()
                return
            elif reply.events is None or not reply.relayed:  # nothing to wait for: one write, framed by its length
                data = reply.data
                self.transport.write(_head(reply, f"content-length: {len(data)}{ending}") + data)
            else:  # chunked, but to an HTTP/1.0 client (which cannot read chunks) unframed, ended by closing
                chunked = version != "HTTP/1.0"
                self.sending = asyncio.ensure_future(self._send_timed(reply, reply.events, chunked, closing))
                return
            if closing:
                self.transport.close()  # once what was written has gone out
                return

    async def _send_timed(self, reply: Reply, events: Events, chunked: bool, closing: bool) -> None:
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        start = loop.time()
        framing = "transfer-encoding: chunked" if chunked else "connection: close"
        self.transport.write(_head(reply, framing + ("\r\nconnection: close" if closing and chunked else "")))
        for at, chunk in events:
            delay = start + at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if chunk:
                self.transport.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
        if reply.cut:  # no last chunk: the connection drops mid-answer, once what was written has gone
            self.sending = None
            self.transport.close()
            return
        self.sending = None
        if chunked:
            self.transport.write(b"0\r\n\r\n")
        if closing or not chunked:
            self.transport.close()
            return
        self._answer_waiting()


def _head(reply: Reply, framing: str) -> bytes:
    lines = [f"HTTP/1.1 {reply.status} {reply.phrase}", *(f"{n}: {v}" for n, v in reply.headers), framing]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _request_body(buffer: bytearray, start: int, headers: dict[str, str]) -> tuple[bytes, int] | None:
    """The body of the request whose head ends at `start`, and where the request ends; None while incomplete.
    ValueError when its framing is broken."""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return _chunked_body(buffer, start)
    text = headers.get("content-length", "0") or "0"
    if not text.isdigit():
        raise ValueError(f"content-length {text!r} is not a number")
    end = start + int(text)
    return (bytes(buffer[start:end]), end) if len(buffer) >= end else None


def _chunked_body(buffer: bytearray, at: int) -> tuple[bytes, int] | None:
    """A chunked body (clients that stream their upload send one), without trailers."""
    body = bytearray()
    while True:
        line_end = buffer.find(b"\r\n", at)
        if line_end < 0:
            return None
        size_text = bytes(buffer[at:line_end]).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise ValueError(f"chunk size {size_text!r} is not hexadecimal") from None
        if size == 0:
            trailer_end = buffer.find(b"\r\n\r\n", line_end)
            if trailer_end < 0:
                return None
            return bytes(body), trailer_end + 4
        data_end = line_end + 2 + size
        if len(buffer) < data_end + 2:
            return None
        body += buffer[line_end + 2 : data_end]
        at = data_end + 2


def _closes(version: str, headers: dict[str, str]) -> bool:
    """Whether the connection ends with this request's answer: the client said `Connection: close`, or it
    speaks HTTP/1.0 and did not ask to keep the connection alive."""
    tokens = {token.strip().lower() for token in headers.get("connection", "").split(",")}
    return "close" in tokens or (version == "HTTP/1.0" and "keep-alive" not in tokens)


def _request_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    """Method, target, HTTP version and lower-case headers of a request head."""
    request_line, *lines = head.decode("latin-1").split("\r\n")
    method, target, version = [*request_line.split(" ", 2), "", ""][:3]
    headers = {
        name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines) if name
    }
    return method, target, version.strip() or "HTTP/1.1", headers
