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
from dataclasses import replace
from typing import TYPE_CHECKING

from llmproxy.chain import Chain, Context, Door, Incoming, Reply
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.registry import websocket_codec
from llmproxy.providers.routes import detect
from llmproxy.providers.websocket import WebSocketCodec
from llmproxy_addons.http_connection import MAX_HEAD, HttpConnection, ParsedRequest, close_server

if TYPE_CHECKING:  # the proxy door hands its flows over; the relay itself runs without mitmproxy
    from mitmproxy import http

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
        self._server = await loop.create_server(lambda: HttpConnection(self), sock=self._socket)

    async def done(self) -> None:
        self.close()

    def close(self) -> None:
        if self._server is not None:
            close_server(self._server)
        self._socket.close()

    def serve(self, flow: "http.HTTPFlow", reply: Reply) -> None:
        """Answer `flow` with `reply`, sent on its schedule."""
        token = str(next(self._tokens))
        self._filed[token] = reply
        flow.request.headers[TOKEN_HEADER] = token
        flow.request.scheme, flow.request.host, flow.request.port = "http", "127.0.0.1", self.port

    def take_websocket(self, flow: "http.HTTPFlow", upgrade: RawRequest) -> None:
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

    def answer_request(self, request: ParsedRequest) -> Reply | None:
        return self.answer(request.method, request.target, request.headers, request.body, request.version)

    def websocket_for(self, request: ParsedRequest) -> tuple[RawRequest, WebSocketCodec] | None:
        return self.websocket(request.target, request.headers)

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


__all__ = ["MAX_HEAD", "TOKEN_HEADER", "StreamRelay"]
