"""The loopback relay's WebSocket side: serves an LLM API spoken over a WebSocket (Codex CLI's Responses
connection) from the cassette or the mock, with no upstream.

mitmproxy cannot answer a WebSocket itself — its WebSocket layer needs a server to relay to — so under replay
and mock an upgrade to an API llmproxy reads message by message is pointed at the relay, like a paced stream
(the proxy still sees every message pass); a client set by base URL connects to the relay directly. The
protocol is wsproto's (permessage-deflate included): no frame is parsed here.

Each request message is read whole with the connection's earlier answers (the API's `WebSocketCodec`) and
answered by the answer chain like an HTTP request to the same URL (an `Incoming` of `Door.WEBSOCKET`): the
reply's events go out as messages at their offsets, an error reply as the error message the API sends; a
reply that is cut (or dropped) closes the connection after what it sent (or at once). One request is answered
at a time, in order. A WebSocket whose upgrade is itself refused (`RefusedWebSocket`) is told why the same way,
then closed.
"""

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace

import orjson
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, BytesMessage, CloseConnection, Ping, Request, TextMessage
from wsproto.extensions import PerMessageDeflate
from wsproto.utilities import LocalProtocolError

from llmproxy.chain import Reply
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.websocket import WebSocketCodec, parsed

logger = logging.getLogger(__name__)

SUCCESS = frozenset({101, 200})  # an answer that is the messages themselves: a recording's 101, the mock's 200


type Answerer = Callable[[RawRequest], Reply]  # the chain, as the relay asks it


class WebSocketSession:
    """One client's WebSocket on the relay, from its upgrade request (`headers`, `target`: parsed by the relay, with
    the bytes that followed it: `rest`) to its close."""

    def __init__(
        self,
        transport: asyncio.Transport,
        headers: list[tuple[bytes, bytes]],
        target: str,
        rest: bytes,
        upgrade: RawRequest,
        codec: WebSocketCodec,
        answer: Answerer,
    ) -> None:
        self.transport = transport
        self.upgrade = upgrade
        self.codec = codec
        self.answer = answer
        self.connection = codec.connection()
        self.socket = WSConnection(ConnectionType.SERVER)
        self.pending: list[str] = []  # the pieces of a text message still arriving
        self.requests: asyncio.Queue[str] = asyncio.Queue()
        self.serving = asyncio.ensure_future(self._serve())
        self.socket.initiate_upgrade_connection(headers, target)
        self._react()  # accepted: what followed the upgrade request (`rest`) is the WebSocket's
        if rest:
            self.receive(rest)

    def receive(self, data: bytes | None) -> None:
        """Bytes from the client (None: it closed the connection)."""
        self.socket.receive_data(data)
        self._react()

    def _react(self) -> None:
        for event in self.socket.events():
            if isinstance(event, Request):
                self._send(self.socket.send(AcceptConnection(extensions=[PerMessageDeflate()])))
            elif isinstance(event, TextMessage):
                self.pending.append(event.data)
                if event.message_finished:
                    self.requests.put_nowait("".join(self.pending))
                    self.pending.clear()
            elif isinstance(event, BytesMessage) and event.message_finished:
                self.requests.put_nowait("")  # not a request any codec reads: answered with an error, in order
            elif isinstance(event, Ping):
                self._send(self.socket.send(event.response()))
            elif isinstance(event, CloseConnection):
                self._send(self.socket.send(event.response()))
                self.close()

    def close(self) -> None:
        self.serving.cancel()
        if not self.transport.is_closing():
            self.transport.close()

    async def _serve(self) -> None:
        while True:
            message = await self.requests.get()
            try:
                await self._answer(message)
            except Exception as exc:  # the client learns why; the relay keeps serving
                logger.exception("llmproxy could not answer a WebSocket message on %s", self.upgrade.path)
                self._message(self.codec.error_message(500, {}, f"llmproxy could not answer: {exc}".encode()))

    async def _answer(self, text: str) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        message = parsed(text)
        if not self.codec.is_request(message):
            why = f"llmproxy answers only requests on this WebSocket, not {_excerpt(text)}"
            self._message(self.codec.error_message(400, {}, orjson.dumps({"error": {"message": why}})))
            return
        whole = self.connection.request(message)
        if whole is None:  # it names an answer this connection never gave: the client sends it again whole
            self._message(self.codec.unknown_reference(message))
            return
        reply = self.answer(replace(self.upgrade, body=orjson.dumps(whole), content_encoding=None))
        if reply.drop:  # no answer: the connection goes, as a failing server's would
            self.close()
            return
        if reply.status not in SUCCESS:
            self._message(self.codec.error_message(reply.status, dict(reply.headers), reply.data))
            self.connection.answered(())
            return
        events = reply.events if reply.events is not None else ((0.0, reply.data),)
        for at, data in events:
            delay = start + at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            self._message(data)
        if reply.cut:  # the answer stops short and the connection drops, with no close frame
            self.close()
            return
        self.connection.answered([parsed(data) for _, data in events])

    def _message(self, data: bytes) -> None:
        """One message: text when it is UTF-8 (every message of the APIs llmproxy reads), else binary."""
        try:
            event: TextMessage | BytesMessage = TextMessage(data.decode())
        except UnicodeDecodeError:
            event = BytesMessage(data)
        self._send(self.socket.send(event))

    def _send(self, data: bytes) -> None:
        if data and not self.transport.is_closing():
            self.transport.write(data)


class RefusedWebSocket:
    """A WebSocket nothing may answer (strict replay, mock: its upgrade is a miss, to an API llmproxy does not read
    message by message): accepted, told why in the error event LLM APIs send on a WebSocket (`{"type": "error",
    "status", "error": {…}}`, the refusal's own error inside), then closed as a policy violation (1008) with the
    diagnostic's first line as the reason. A refused handshake showed in some clients as a bare status ("500"),
    the diagnostic lost, and was retried as a transport failure."""

    def __init__(
        self, transport: asyncio.Transport, headers: list[tuple[bytes, bytes]], target: str, rest: bytes, reply: Reply
    ) -> None:
        self.transport = transport
        self.socket = WSConnection(ConnectionType.SERVER)
        self.socket.initiate_upgrade_connection(headers, target)
        for event in self.socket.events():
            if isinstance(event, Request):
                self._send(self.socket.send(AcceptConnection(extensions=[PerMessageDeflate()])))
        told, reason = refusal(reply)
        self._send(self.socket.send(TextMessage(told)))
        self._send(self.socket.send(CloseConnection(code=1008, reason=reason)))
        if rest:
            self.receive(rest)

    def receive(self, data: bytes | None) -> None:
        """Bytes from the client (None: it closed the connection): once it answers the close, the connection goes."""
        try:
            self.socket.receive_data(data)
            closed = data is None or any(isinstance(event, CloseConnection) for event in self.socket.events())
        except LocalProtocolError:  # anything after the close: nothing more to say
            closed = True
        if closed:
            self.close()

    def close(self) -> None:
        if not self.transport.is_closing():
            self.transport.close()

    def _send(self, data: bytes) -> None:
        if data and not self.transport.is_closing():
            self.transport.write(data)


def refusal(reply: Reply) -> tuple[str, str]:
    """A refused request's error event, and its close reason (a close frame holds 123 bytes of it)."""
    try:
        parsed = orjson.loads(reply.data)
    except orjson.JSONDecodeError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        error = {"type": "invalid_request_error", "message": reply.data.decode("utf-8", "replace")}
    message = str(error.get("message") or "refused by llmproxy")
    reason = message.splitlines()[0].encode()[:123].decode("utf-8", "ignore")
    return orjson.dumps({"type": "error", "status": reply.status, "error": error}).decode(), reason


def _excerpt(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:59] + "…")
