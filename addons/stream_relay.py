"""A loopback HTTP/1.1 server on the proxy's own event loop that sends prepared responses chunk by chunk, on
a schedule: mitmproxy cannot emit a timed synthetic stream itself (mitmproxy-notes.md §3b), so a replayed
stream is fetched from here, through the proxy, with its recorded timing.

`serve` files a response under a token and points the flow at the relay with the token in a header; the
relay answers that one request, streamed through the proxy as it comes, and forgets the token.
"""

import asyncio
import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from mitmproxy import http

logger = logging.getLogger(__name__)

TOKEN_HEADER = "x-llmproxy-relay"


@dataclass(frozen=True, slots=True)
class Prepared:
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]  # without framing headers: the relay sends chunked
    chunks: Sequence[tuple[float, bytes]]  # (seconds after the request reached the relay, bytes)


class StreamRelay:
    def __init__(self) -> None:
        self._prepared: dict[str, Prepared] = {}
        self._tokens = itertools.count(1)
        self._server: asyncio.Server | None = None
        self.port = 0

    async def running(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
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

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                headers = dict(_header_lines(head))
                length = int(headers.get("content-length", "0") or 0)
                if length:
                    await reader.readexactly(length)
                prepared = self._prepared.pop(headers.get(TOKEN_HEADER, ""), None)
                if prepared is None:
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    await writer.drain()
                    continue
                await self._send(prepared, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    @staticmethod
    async def _send(prepared: Prepared, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        lines = [f"HTTP/1.1 {prepared.status} {prepared.reason}"]
        lines += [f"{name}: {value}" for name, value in prepared.headers]
        lines.append("transfer-encoding: chunked")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        for at, chunk in prepared.chunks:
            delay = start + at - loop.time()
            if delay > 0:
                await writer.drain()
                await asyncio.sleep(delay)
            if chunk:
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        writer.write(b"0\r\n\r\n")
        await writer.drain()


def _header_lines(head: bytes) -> list[tuple[str, str]]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    return [(name.strip().lower(), value.strip()) for name, _, value in (line.partition(":") for line in lines) if name]
