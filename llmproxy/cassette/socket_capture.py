"""Cut one WebSocket connection's messages into exchanges as they pass through the proxy.

A message from the client that its API's codec reads as a request opens an exchange; the server's messages
are its events, until the one that ends the answer, which hands the finished exchange back. Messages the
server sends between answers are kept for the start of the next exchange. What cannot become part of an
exchange — client messages that are not requests, server messages no later request collects, an answer cut
by the connection's end — is counted in `missed`, so the recording can say so. Like `StreamCapture` this runs
on the proxy's loop for every message: it only stores bytes and times, and never raises.
"""

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from llmproxy.model.exchange import RawEvent, RawExchange, RawRequest, RawResponse
from llmproxy.providers.websocket import WebSocketCodec, parsed


@dataclass(frozen=True, slots=True)
class Upgrade:
    """The connection's upgrade: the request as the client sent it, and the 101 answer's status line and headers."""

    request: RawRequest
    status: int
    reason: str
    http_version: str
    headers: tuple[tuple[str, str], ...]


@dataclass(slots=True)
class _Open:
    request: bytes
    start: float
    events: list[RawEvent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class SocketCapture:
    def __init__(self, codec: WebSocketCodec, upgrade: Upgrade, connection: int) -> None:
        """`connection`: a number no other connection of this recording has."""
        self.codec = codec
        self.upgrade = upgrade
        self.connection = connection
        self.missed: list[str] = []  # what could not be recorded, one line each
        self._open: _Open | None = None
        self._between: list[tuple[float, bytes, bool]] = []  # server messages between answers: (time, data, binary)

    def client(self, data: bytes, text: bool, at: float) -> RawExchange | None:
        """A message from the client; the exchange it cut short, if one was still open."""
        message = parsed(data) if text else None
        if not self.codec.is_request(message):
            kind = message.get("type") if isinstance(message, dict) else None
            what = f"{kind!r} messages" if isinstance(kind, str) else f"{_kind(text)} messages"
            self.missed.append(f"{what} from the client, which are not requests")
            if self._open is not None:
                self._open.notes.append("the client sent a message that is not a request during the answer")
            return None
        if self._open is not None:
            self._open.notes.append("the client sent its next request before this answer ended")
        cut = self._finish(None) if self._open is not None else None
        self._open = _Open(data, at, [RawEvent(0.0, message, binary) for _, message, binary in self._between])
        self._between.clear()
        return cut

    def server(self, data: bytes, text: bool, at: float) -> RawExchange | None:
        """A message from the server; the exchange it ends, if it is the last of an answer."""
        current = self._open
        if current is None:
            self._between.append((at, data, not text))
            return None
        current.events.append(RawEvent(_ms(at - current.start), data, not text))
        return self._finish(None) if text and self.codec.ends_answer(parsed(data)) else None

    def close(self, reason: str | None) -> RawExchange | None:
        """The connection ended (`reason`: why, if it failed); the exchange it cut short, if any."""
        if self._between:
            self.missed.append(f"{len(self._between)} message(s) from the server after the last answer")
            self._between.clear()
        if self._open is None:
            return None  # an answer cut short is named by the writer, which records it only if asked
        return self._finish(f"the connection ended before the answer did{f': {reason}' if reason else ''}")

    def _finish(self, error: str | None) -> RawExchange:
        current = self._open
        assert current is not None
        self._open = None
        upgrade = self.upgrade
        events = tuple(current.events)
        times = [event.t_ms for event in events]
        return RawExchange(
            request=replace(upgrade.request, body=current.request, content_encoding=None),
            response=RawResponse(
                upgrade.status, upgrade.reason, upgrade.http_version, upgrade.headers, None, events, None
            ),
            error=error,
            started_at=datetime.fromtimestamp(current.start, UTC),
            ttfb_ms=times[0] if times else None,
            total_ms=times[-1] if times else None,
            notes=tuple(current.notes),
            websocket=self.connection,
        )


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _kind(text: bool) -> str:
    return "text" if text else "binary"
