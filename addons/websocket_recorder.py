"""Records the LLM exchanges of WebSocket connections passing through (Codex CLI's default transport): each
request message and the messages that answered it become an exchange (llmproxy.cassette.socket_capture).

Like the HTTP recorder it only observes: messages reach the other side unchanged, and its own failures are
logged, never raised into the flow. A WebSocket it cannot read message by message is passed through and,
with everything else it could not record, named in `report()` at the end of the run, and at once on stderr.
"""

import logging
from collections import Counter
from dataclasses import replace

from mitmproxy import http

from addons.flows import ANSWERED, raw_request
from addons.recorder import Sink
from llmproxy.cassette.convert import DEFAULT_PORTS
from llmproxy.cassette.socket_capture import SocketCapture, Upgrade
from llmproxy.providers.registry import websocket_codec
from llmproxy.providers.routes import detect, is_websocket_upgrade
from llmproxy.record_scope import RecordScope

logger = logging.getLogger(__name__)

_KEY = "llmproxy.websocket"
_SCHEMES = {"http": "ws", "https": "wss"}


class WebSocketRecorder:
    def __init__(self, scope: RecordScope, writer: Sink) -> None:
        self.scope = scope
        self.writer = writer
        self._connections = 0
        self._missed: Counter[str] = Counter()  # "what, where" → how often

    def request(self, flow: http.HTTPFlow) -> None:
        request = flow.request
        if flow.metadata.get(ANSWERED) or not is_websocket_upgrade(request.method, request.headers):
            return
        raw = raw_request(request)  # before --map sends it elsewhere
        flow.metadata[_KEY] = replace(raw, scheme=_SCHEMES.get(raw.scheme, raw.scheme))

    def websocket_start(self, flow: http.HTTPFlow) -> None:
        raw = flow.metadata.pop(_KEY, None)
        response = flow.response
        if raw is None or response is None:
            return
        port = "" if DEFAULT_PORTS.get(raw.scheme) == raw.port else f":{raw.port}"
        where = f"{raw.scheme}://{raw.host}{port}{raw.path.split('?', 1)[0]}"  # no query: it may hold a key
        route = detect(raw.host, raw.path, dict(raw.headers), method=raw.method, port=raw.port)
        codec = websocket_codec(route)
        if codec is None:
            if route is not None or self.scope.covers(raw.host):
                self._miss(f"a WebSocket llmproxy cannot read message by message, to {where}: passed through")
            return
        self._connections += 1
        upgrade = Upgrade(raw, response.status_code, response.reason, response.http_version, _headers(response))
        flow.metadata[_KEY] = (SocketCapture(codec, upgrade, self._connections), where)

    def websocket_message(self, flow: http.HTTPFlow) -> None:
        capture = flow.metadata.get(_KEY)
        if capture is None or flow.websocket is None:
            return
        try:
            socket, _ = capture
            message = flow.websocket.messages[-1]
            take = socket.client if message.from_client else socket.server
            finished = take(message.content, message.is_text, message.timestamp)
            del flow.websocket.messages[:]  # recorded: a long session need not keep every message in memory
            if finished is not None:
                self.writer.add(finished)
        except Exception:  # observing must never break the user's traffic
            logger.exception("could not record a WebSocket message")

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        capture = flow.metadata.pop(_KEY, None)
        if capture is None:
            return
        socket, where = capture
        try:
            error = flow.error.msg if flow.error is not None else None
            finished = socket.close(error)
            if finished is not None:
                self.writer.add(finished)
        except Exception:
            logger.exception("could not record the end of a WebSocket")
        for line in socket.missed:
            self._miss(f"{line}, on {where}")

    def report(self) -> str:
        """What was not recorded, one line each; empty when everything was."""
        return "\n".join(
            f"not recorded: {what}" + (f" ({count} times)" if count > 1 else "") for what, count in self._missed.items()
        )

    def _miss(self, what: str) -> None:
        if what not in self._missed:
            logger.warning("not recorded: %s", what)
        self._missed[what] += 1


def _headers(response: http.Response) -> tuple[tuple[str, str], ...]:
    return tuple(response.headers.items(multi=True))
