"""Records the LLM exchanges of WebSocket connections passing through (Codex CLI's default transport): each
request message and the messages that answered it become an exchange (llmproxy.cassette.socket_capture).

Like the HTTP recorder it only observes: messages reach the other side unchanged, and its own failures are
logged, never raised into the flow. A WebSocket it cannot read message by message is passed through and,
with everything else it could not record, named in `report()` at the end of the run, and at once on stderr.
"""

import logging
from dataclasses import replace

from mitmproxy import http

from llmproxy.cassette.socket_capture import SocketCapture, Upgrade
from llmproxy.chain.taps.record import RecordTap
from llmproxy.http import authority
from llmproxy.model.exchange import RawExchange
from llmproxy.providers.registry import websocket_codec
from llmproxy.providers.routes import detect, is_websocket_upgrade
from llmproxy_addons.door import sent_upstream

logger = logging.getLogger(__name__)

_KEY = "llmproxy.websocket"
_SCHEMES = {"http": "ws", "https": "wss"}


class WebSocketRecorder:
    """The record tap's companion for WebSockets: it writes to the tap's cassette and reports what it could not
    record through the tap, so the end-of-run summary lists it."""

    def __init__(self, tap: RecordTap) -> None:
        self.tap = tap
        self._connections = 0

    def request(self, flow: http.HTTPFlow) -> None:
        """Runs after the proxy door: only what goes upstream is recorded, as the client sent it."""
        raw = sent_upstream(flow)
        if raw is None or not is_websocket_upgrade(raw.method, flow.request.headers):
            return
        flow.metadata[_KEY] = replace(raw, scheme=_SCHEMES.get(raw.scheme, raw.scheme))

    def websocket_start(self, flow: http.HTTPFlow) -> None:
        raw = flow.metadata.pop(_KEY, None)
        response = flow.response
        if raw is None or response is None or self.tap.state.value is None:  # None: not recording now
            return
        where = f"{raw.scheme}://{authority(raw.scheme, raw.host, raw.port)}{raw.path.split('?', 1)[0]}"  # no query
        route = detect(raw.host, raw.path, dict(raw.headers), method=raw.method, port=raw.port)
        codec = websocket_codec(route)
        if codec is None:
            if route is not None or self.tap.scope.covers(raw.host):
                self.tap.not_recorded(
                    f"a WebSocket llmproxy cannot read message by message, to {where}: passed through"
                )
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
                self._add(finished)
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
                self._add(finished)
        except Exception:
            logger.exception("could not record the end of a WebSocket")
        for line in socket.missed:
            self.tap.not_recorded(f"{line}, on {where}")

    def _add(self, finished: RawExchange) -> None:
        """Into the cassette the tap records to now (none: a pytest test that replays has begun since)."""
        if (sink := self.tap.state.value) is not None:
            sink.add(finished)


def _headers(response: http.Response) -> tuple[tuple[str, str], ...]:
    return tuple(response.headers.items(multi=True))
