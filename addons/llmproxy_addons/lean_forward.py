"""A request the chain sends upstream, forwarded by the lean door itself (a session that records): sent on a
kept-alive connection of `upstream_client`, its answer written to the client as it comes — unbuffered, its
content-encoding as the server sent it — while the chain's taps see it as the proxy door shows it to them: the
head, then each piece of a stream with its time (or a plain body whole), then the exchange's end, which the
connection waits for before it serves its next request (the recorder's full queue holds it there).

What the server's failure becomes is what mitmproxy makes of it: a 502 saying why when nothing had come yet,
the client's connection dropped when the answer broke off midway; the taps see the error either way.
"""

import asyncio
import time
from datetime import UTC, datetime
from typing import Final

from llmproxy.cassette.decoding import decode_body
from llmproxy.chain import Chain, CutStream, Incoming, ResponseHead
from llmproxy.chain.reply import reason_phrase
from llmproxy.model.exchange import RawExchange, RawResponse
from llmproxy_addons.http_connection import HttpConnection, ParsedRequest
from llmproxy_addons.upstream_client import Answer, Server, UpstreamClient, UpstreamConnection, UpstreamError

# hop-by-hop: said again by each side for its own connection, never passed on
_HOP: Final = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "upgrade"})
_CLIENT_DISCONNECTED: Final = "Client disconnected."


class Forward:
    """What the lean door does with a request the chain sent upstream: where it goes (`server`, the request
    target `path` there, the Host header it then names, None: as the client sent it)."""

    __slots__ = ("abandoned", "chain", "client", "connection", "host_header", "incoming", "path", "server")

    def __init__(
        self,
        chain: Chain,
        client: UpstreamClient,
        incoming: Incoming,
        server: Server,
        path: str,
        host_header: str | None,
    ) -> None:
        self.chain = chain
        self.client = client
        self.incoming = incoming
        self.server = server
        self.path = path
        self.host_header = host_header
        self.connection: UpstreamConnection | None = None  # once it is sent
        self.abandoned = False  # the client went away before its answer was whole

    def abandon(self) -> None:
        """The client went away: the upstream's answer is not waited for (its connection closed)."""
        self.abandoned = True
        connection = self.connection
        if connection is not None and connection.transport is not None:
            connection.transport.close()

    def hold(self, held: bool) -> None:
        connection = self.connection
        if connection is None or connection.transport is None or connection.closed:
            return
        if held:
            connection.transport.pause_reading()
        else:
            connection.transport.resume_reading()

    def request_bytes(self, method: str, headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
        """The request as it goes out: its headers as the client sent them (with what a stage asked changed, the
        Host header naming where `--map` sends it), its body as it came, framed by its length."""
        forwarding = self.incoming.forwarding
        changed = {name.lower(): value for name, value in forwarding.request_headers} if forwarding else {}
        lines = [f"{method} {self.path} HTTP/1.1".encode("latin-1")]
        framed = False
        for name, value in headers:
            lower = name.lower().decode("latin-1")
            if lower in changed or lower in _HOP or lower == "expect":  # the door said 100 Continue itself
                continue
            if lower == "content-length":
                framed = True
            elif lower == "host" and self.host_header is not None:
                value = self.host_header.encode("latin-1")
            lines.append(name + b": " + value)
        for changed_name, replacement in changed.items():
            if replacement is not None:
                lines.append(f"{changed_name}: {replacement}".encode("latin-1"))
        if not framed and (body or method not in ("GET", "HEAD")):  # it came in chunks: now its length says
            lines.append(b"content-length: %d" % len(body))
        return b"\r\n".join(lines) + b"\r\n\r\n" + body

    async def send(self, connection: HttpConnection, request: ParsedRequest) -> bool:
        """Forward `request` and write the answer on the client's `connection` (in chunks, or to an HTTP/1.0
        client ended by closing when the server gave no length); True when the connection serves on."""
        transport = connection.transport
        assert transport is not None
        method, started, chunked, closing = request.method, request.started, not request.old, not request.keep_alive
        incoming, chain = self.incoming, self.chain
        try:
            forwarding = incoming.forwarding
            if forwarding is not None and forwarding.wait > 0:
                await asyncio.sleep(forwarding.wait)
            sent = self.request_bytes(method, request.raw_headers, request.body)
            try:
                upstream, answer = await self._answer(sent, method == "HEAD")
            except UpstreamError as error:
                why = _CLIENT_DISCONNECTED if self.abandoned else str(error)
                _bad_gateway(transport, f"cannot reach {self.server.host}:{self.server.port}: {why}")
                observers = chain.observe(incoming, None)
                if observers is not None:
                    await observers.end(self._exchange(started, None, None, None, why))
                return False
            return await self._relay(transport, upstream, answer, method, started, chunked, closing)
        finally:
            chain.ended(incoming)

    async def _answer(self, request: bytes, bodiless: bool) -> tuple[UpstreamConnection, Answer]:
        """The answer's head, on a kept connection — or, when that one turns out closed by the server (it may
        close an idle connection at any time), on a new one."""
        for attempt in range(2):
            connection = self.connection = await self.client.connection(self.server)
            fresh = not connection.reusable  # a kept one could serve another request when it was released
            if self.abandoned:
                raise UpstreamError(_CLIENT_DISCONNECTED)
            try:
                return connection, await connection.answer(request, bodiless)
            except UpstreamError:
                self.client.release(self.server, connection)
                if fresh or attempt == 1:
                    raise
        raise AssertionError("unreachable")

    async def _relay(
        self,
        transport: asyncio.Transport,
        connection: UpstreamConnection,
        answer: Answer,
        method: str,
        started: float,
        chunked: bool,
        closing: bool,
    ) -> bool:
        incoming = self.incoming
        first_byte = time.time()
        headers = answer.headers
        forwarding = incoming.forwarding
        if forwarding is not None and forwarding.answer_headers and 200 <= answer.status < 300:
            replaced = {name.lower() for name, _ in forwarding.answer_headers}
            headers = [(n, v) for n, v in headers if n.lower() not in replaced] + list(forwarding.answer_headers)
        head = ResponseHead.of(incoming, answer.status, tuple(headers), started)
        observers = self.chain.observe(incoming, head)
        length = next((v for n, v in headers if n.lower() == "content-length"), None)
        bodiless = method == "HEAD" or answer.status in (204, 304) or 100 <= answer.status < 200
        chunks = chunked and length is None and not bodiless  # else framed by its length, or by the close
        closing = closing or (length is None and not chunks and not bodiless)
        transport.write(_head(answer, headers, chunks, closing))
        kept: list[bytes] = []  # a plain body, whole, for the taps
        cut = False
        tapping = observers if observers is not None and head.streamed else None

        def sink(data: bytes) -> None:
            nonlocal cut
            if cut:
                return
            if tapping is not None:
                try:
                    data = tapping.chunk(data, time.time())
                except CutStream as stop:
                    cut, data = True, stop.keep
            elif observers is not None:
                kept.append(data)
            if data:
                transport.write(b"%x\r\n%s\r\n" % (len(data), data) if chunks else data)
            if cut:
                transport.close()
                if connection.transport is not None:
                    connection.transport.close()

        connection.take_body(sink)
        error: str | None = None
        try:
            assert connection.finished is not None
            await connection.finished
        except UpstreamError as failure:
            error = str(failure)
        if cut or self.abandoned:
            error = _CLIENT_DISCONNECTED
        elif error is not None:
            transport.abort()  # the answer broke off: so does the client's, as a failing server's would
        elif chunks:
            transport.write(b"0\r\n\r\n")
        self.client.release(self.server, connection)
        if observers is not None:
            body = b"".join(kept) if tapping is None else None
            await observers.end(self._exchange(started, first_byte, answer, (headers, body), error))
        if cut or error is not None or closing:
            transport.close()
            return False
        return True

    def _exchange(
        self,
        started: float,
        first_byte: float | None,
        answer: Answer | None,
        got: tuple[list[tuple[str, str]], bytes | None] | None,
        error: str | None,
    ) -> RawExchange:
        """The exchange as it ended, as `flows.raw_exchange` makes it of a mitmproxy flow."""
        ended = time.time()
        response = None
        if answer is not None and got is not None:
            headers, data = got
            encoding = next((v for n, v in headers if n.lower() == "content-encoding"), None)
            body, undecodable = decode_body(data, encoding) if data is not None else (None, None)
            response = RawResponse(
                answer.status, answer.reason, answer.version, tuple(headers), body, None, encoding, undecodable
            )
        return RawExchange(
            request=self.incoming.raw,
            response=response,
            error=error,
            started_at=datetime.fromtimestamp(started, UTC),
            ttfb_ms=round((first_byte - started) * 1000, 3) if first_byte is not None else None,
            total_ms=round((ended - started) * 1000, 3),
        )


def _head(answer: Answer, headers: list[tuple[str, str]], chunks: bool, closing: bool) -> bytes:
    lines = [f"HTTP/1.1 {answer.status} {answer.reason}"]
    lines += [f"{name}: {value}" for name, value in headers if name.lower() not in _HOP]
    if chunks:
        lines.append("transfer-encoding: chunked")
    if closing:
        lines.append("connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _bad_gateway(transport: asyncio.Transport, why: str) -> None:
    message = f"llmproxy: {why}\n".encode()
    head = b"HTTP/1.1 502 %s\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n" % (
        reason_phrase(502).encode()
    )
    transport.write(head + b"content-length: %d\r\n\r\n%s" % (len(message), message))
    transport.close()
