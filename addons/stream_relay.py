"""A loopback HTTP/1.1 server on the proxy's own event loop that sends prepared responses chunk by chunk, on
a schedule: mitmproxy cannot emit a timed synthetic stream itself (mitmproxy-notes.md §3b), so a replayed
stream is fetched from here, through the proxy, with its recorded timing.

`serve` files a response under a token and points the flow at the relay with the token in a header; the
relay answers that one request, streamed through the proxy as it comes, and forgets the token.

A request without a token is a client using the relay as its base URL (`llmproxy mock`): `direct` answers
it on the spot, without the proxy's cost of interception (about a millisecond of CPU a request).
"""

import asyncio
import itertools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mitmproxy import http

from llmproxy.model.exchange import RawRequest

logger = logging.getLogger(__name__)

TOKEN_HEADER = "x-llmproxy-relay"
_HOST_PORT = re.compile(r"(.*?)(?::(\d+))?")  # a Host header: name (or [v6 address]) and optional port


@dataclass(slots=True)
class Prepared:
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]  # without framing headers: the relay sends chunked
    chunks: Sequence[tuple[float, bytes]]  # (seconds after the request reached the relay, bytes)


type Direct = Callable[[RawRequest], Prepared]


class StreamRelay:
    def __init__(self, direct: Direct | None = None, port: int = 0) -> None:
        self.direct = direct
        self.port = port  # 0: a free one, known once running
        self._prepared: dict[str, Prepared] = {}
        self._tokens = itertools.count(1)
        self._server: asyncio.Server | None = None

    async def running(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Connection(self), "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def done(self) -> None:
        if self._server is not None:
            self._server.close()

    def serve(self, flow: http.HTTPFlow, response: Prepared) -> None:
        """Answer `flow` with `response`, sent on its schedule."""
        token = str(next(self._tokens))
        self._prepared[token] = response
        flow.request.headers[TOKEN_HEADER] = token
        flow.request.scheme, flow.request.host, flow.request.port = "http", "127.0.0.1", self.port

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None and TOKEN_HEADER in flow.request.headers and flow.request.port == self.port:
            flow.response.stream = True  # the timed chunks pass through as they come

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Prepared | None:
        """What a request to the relay gets: the response filed under its token, or a direct answer."""
        token = headers.get(TOKEN_HEADER)
        if token is not None:
            return self._prepared.pop(token, None)
        return self._answer_directly(method, target, headers, body) if self.direct is not None else None

    def _answer_directly(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Prepared:
        assert self.direct is not None
        host, port = _HOST_PORT.fullmatch(headers.get("host", "")).groups()  # type: ignore[union-attr]
        raw = RawRequest(
            method=method,
            scheme="http",
            host=host or "127.0.0.1",
            port=int(port) if port else self.port,
            path=target,
            http_version="HTTP/1.1",
            headers=tuple(headers.items()),
            body=body,
            content_encoding=headers.get("content-encoding"),
        )
        try:
            return self.direct(raw)
        except Exception as exc:  # the server keeps serving; this client learns why
            logger.exception("llmproxy could not answer %s %s", method, target)
            plain = (("content-type", "text/plain; charset=utf-8"),)
            return Prepared(
                500, "Internal Server Error", plain, [(0.0, f"llmproxy could not answer: {exc}\n".encode())]
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

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._answer_waiting()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.sending is not None:
            self.sending.cancel()

    def _answer_waiting(self) -> None:
        while self.sending is None and self.transport is not None and not self.transport.is_closing():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            method, target, headers = _request_head(bytes(self.buffer[: end + 4]))
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
            prepared = self.relay.answer(method, target, headers, body)
            if prepared is None:
                self.transport.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
            elif all(at <= 0 for at, _ in prepared.chunks):  # nothing to wait for: one write, framed by its length
                body = b"".join(data for _, data in prepared.chunks)
                self.transport.write(_head(prepared, f"content-length: {len(body)}") + body)
            else:
                self.sending = asyncio.ensure_future(self._send_timed(prepared))

    async def _send_timed(self, prepared: Prepared) -> None:
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        start = loop.time()
        self.transport.write(_head(prepared, "transfer-encoding: chunked"))
        for at, chunk in prepared.chunks:
            delay = start + at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if chunk:
                self.transport.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.transport.write(b"0\r\n\r\n")
        self.sending = None
        self._answer_waiting()


def _head(prepared: Prepared, framing: str) -> bytes:
    lines = [f"HTTP/1.1 {prepared.status} {prepared.reason}", *(f"{n}: {v}" for n, v in prepared.headers), framing]
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


def _request_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    """Method, target and lower-case headers of a request head."""
    request_line, *lines = head.decode("latin-1").split("\r\n")
    method, target, _ = [*request_line.split(" ", 2), "", ""][:3]
    headers = {
        name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines) if name
    }
    return method, target, headers
