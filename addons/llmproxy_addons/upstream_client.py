"""HTTP/1.1 to the upstream, for the lean door when a session records: a request the chain sends upstream goes
out on a connection of this process's own, kept alive per server, and its answer comes back piece by piece as
the server sends it (docs/architecture.md#one-chain-three-doors). No mitmproxy: the lean door forwards what
recording sends out at about the cost of its own parsing, where mitmproxy's HTTP layer costs as much as mitmdump.

TLS is verified as mitmproxy verifies it by default: against certifi's roots, or only against `--upstream-ca`
when one is given (mitmproxy's `ssl_verify_upstream_trusted_ca`), the server's name checked.
"""

import asyncio
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import certifi
import httptools

_IDLE_PER_SERVER: Final = 16  # connections kept open to one server between requests


@dataclass(frozen=True, slots=True)
class Server:
    """Where a request goes: `name` is the host the TLS certificate must be for (and the SNI sent)."""

    scheme: str
    host: str
    port: int
    name: str


class UpstreamError(Exception):
    """The server could not be reached, or failed before its answer was whole."""


def trust(upstream_ca: Path | None) -> ssl.SSLContext:
    """The context servers are verified with: certifi's roots, or only `upstream_ca` (as mitmproxy does)."""
    context = ssl.create_default_context(cafile=str(upstream_ca) if upstream_ca is not None else certifi.where())
    context.set_alpn_protocols(["http/1.1"])
    return context


class Answer:
    """The head of a server's answer, and what it says about its body."""

    __slots__ = ("headers", "reason", "status", "version")

    def __init__(self, status: int, reason: str, headers: list[tuple[str, str]], version: str) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.version = version


class UpstreamConnection(asyncio.Protocol):
    """One connection to a server, answering one request at a time: `answer` sends a request and waits for its
    head; the body then goes to `take_body`'s sink as it comes, and `finished` is done once it is whole."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.reusable = False  # the last answer was whole and the server keeps the connection open
        self.closed = False
        self._head: asyncio.Future[Answer] | None = None
        self.finished: asyncio.Future[None] | None = None
        self._sink: Callable[[bytes], None] | None = None  # where the body's pieces go, once someone takes them
        self._early: list[bytes] = []  # pieces that came with the head, before that
        self._headers: list[tuple[str, str]] = []
        self._reason = b""
        self._framed = False  # the body's end is told by a length or a last chunk, not by the connection closing
        self._bodiless = False  # an answer to HEAD: no body whatever its headers say

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def answer(self, request: bytes, bodiless: bool) -> "asyncio.Future[Answer]":
        """Send `request` (head and body, framed); the answer's head, once it has come (`bodiless`: an
        answer to HEAD, which has no body whatever its headers say)."""
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        self._head, self.finished = loop.create_future(), loop.create_future()
        self._sink, self._early = None, []
        self._bodiless, self.reusable = bodiless, False
        self.transport.write(request)
        return self._head

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail("the server switched protocols")
        except httptools.HttpParserError as error:
            self._fail(f"a malformed answer from the server: {error}")

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._head is not None and self._head.done() and not self._framed:  # its end is the connection's
            self._done()
            return
        reason = f": {exc}" if exc is not None else ""
        self._fail(f"server closed connection{reason}")

    # httptools' callbacks

    def on_message_begin(self) -> None:
        self._headers, self._reason = [], b""

    def on_status(self, status: bytes) -> None:
        self._reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if status < 200 and status != 101:  # an interim answer (100 Continue): the real one follows
            return
        names = {name.lower() for name, _ in self._headers}
        self._framed = "content-length" in names or "transfer-encoding" in names or status in (204, 304)
        version = f"HTTP/{self.parser.get_http_version()}"
        answer = Answer(status, self._reason.decode("latin-1"), self._headers, version)
        if self._head is not None and not self._head.done():
            self._head.set_result(answer)
        if self._bodiless or status in (204, 304):
            self._framed = True
            self._done()

    def on_body(self, body: bytes) -> None:
        if self._sink is None:
            self._early.append(body)
        else:
            self._sink(body)

    def take_body(self, sink: Callable[[bytes], None]) -> None:
        """The body's pieces to `sink` from now on, those that came already first."""
        early, self._early = self._early, []
        for piece in early:
            sink(piece)
        self._sink = sink

    def on_message_complete(self) -> None:
        if self.parser.get_status_code() < 200 and self.parser.get_status_code() != 101:
            return
        self._done()

    def _done(self) -> None:
        finished = self.finished
        if finished is not None and not finished.done():
            self.reusable = not self.closed and self.parser.should_keep_alive() and self._framed
            finished.set_result(None)

    def _fail(self, why: str) -> None:
        self.reusable = False
        head, finished = self._head, self.finished
        if head is not None and not head.done():  # what waits for the head is told; the end is never awaited
            head.set_exception(UpstreamError(why))
            if finished is not None:
                finished.cancel()
        elif finished is not None and not finished.done():
            finished.set_exception(UpstreamError(why))
        if self.transport is not None:
            self.transport.close()


class UpstreamClient:
    """Connections to servers, kept open between requests: one request on a connection at a time."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self.context = context
        self._idle: dict[Server, list[UpstreamConnection]] = {}

    async def connection(self, server: Server) -> UpstreamConnection:
        idle = self._idle.get(server)
        while idle:
            connection = idle.pop()
            if not connection.closed:
                connection.parser = httptools.HttpResponseParser(connection)
                return connection
        loop = asyncio.get_running_loop()
        tls = server.scheme == "https"
        try:
            _, connection = await loop.create_connection(
                UpstreamConnection,
                server.host,
                server.port,
                ssl=self.context if tls else None,
                server_hostname=server.name if tls else None,
            )
        except (OSError, ssl.SSLError, ssl.CertificateError) as error:
            raise UpstreamError(str(error) or type(error).__name__) from error
        return connection

    def release(self, server: Server, connection: UpstreamConnection) -> None:
        """`connection` is done with: kept for the server's next request when it can serve one, else closed."""
        idle = self._idle.setdefault(server, [])
        if connection.reusable and not connection.closed and len(idle) < _IDLE_PER_SERVER:
            if connection.transport is not None:  # held for a slow client at its last piece, maybe
                connection.transport.resume_reading()
            idle.append(connection)
        elif connection.transport is not None:
            connection.transport.close()

    def close(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                if connection.transport is not None:
                    connection.transport.abort()
        self._idle.clear()
