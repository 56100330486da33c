"""Records LLM exchanges into a cassette while they pass through, unchanged and unbuffered.

A stream is handed to the client chunk by chunk as it arrives; the tap only notes each chunk and its time
for the core's `StreamCapture`. Everything the recorder does is observation: it never changes what the
client receives, and its own failures are logged, not raised into the flow (fail open). When the writer is
behind, the hook that hands an exchange over returns what to await (back-pressure: that flow waits, the
event loop does not).
"""

import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

from mitmproxy import http

from addons.flows import ANSWERED, raw_exchange, raw_request
from llmproxy.cassette.stream_capture import StreamCapture
from llmproxy.model.exchange import RawExchange, RawRequest
from llmproxy.providers.routes import detect
from llmproxy.record_scope import RecordScope

logger = logging.getLogger(__name__)

_KEY = "llmproxy.recording"


@dataclass(slots=True)
class _Recording:
    streaming_route: bool
    request: RawRequest | None = None
    capture: StreamCapture | None = None
    finished: bool = False


class Sink(Protocol):
    """Where finished exchanges go: a `CassetteWriter`, or the `WriterProcess` that runs one. `put` returns
    None once queued, or an awaitable while the queue is full."""

    def put(self, exchange: RawExchange) -> Awaitable[None] | None: ...

    def add(self, exchange: RawExchange) -> None: ...


class Recorder:
    def __init__(self, scope: RecordScope, writer: Sink) -> None:
        self.scope = scope
        self.writer = writer

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        request = flow.request
        host = request.pretty_host
        route = detect(host, request.path, request.headers, method=request.method, port=request.port)
        if route is None and not self.scope.covers(host):
            return
        flow.metadata[_KEY] = _Recording(streaming_route=route is not None and route.streaming is True)

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.get(ANSWERED):  # answered by llmproxy (a replay hit): not a new recording
            flow.metadata.pop(_KEY, None)
        elif recording := flow.metadata.get(_KEY):
            recording.request = raw_request(flow.request)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        response = flow.response
        assert response is not None
        recording: _Recording | None = flow.metadata.get(_KEY)
        if recording is None or response.status_code == 101:
            response.stream = True  # not ours to keep: pass it through as it comes
            return
        content_type = response.headers.get("content-type", "")
        if not (StreamCapture.streams(content_type) or (recording.streaming_route and response.status_code == 200)):
            return  # a plain body: buffered, recorded whole in `response`
        capture = StreamCapture(content_type, response.headers.get("content-encoding"), flow.request.timestamp_start)
        recording.capture = capture

        def tap(chunk: bytes) -> bytes:
            capture.feed(chunk, time.time())
            return chunk

        response.stream = tap

    def response(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        return self._finish(flow, None)

    def error(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        return self._finish(flow, flow.error.msg if flow.error else "unknown error")

    def _finish(self, flow: http.HTTPFlow, error: str | None) -> Awaitable[None] | None:
        recording: _Recording | None = flow.metadata.get(_KEY)
        if recording is None or recording.finished or recording.request is None or flow.websocket is not None:
            return None
        recording.finished = True
        try:
            capture = recording.capture
            events = capture.finish(time.time()) if capture is not None else None
            notes = (capture.warning,) if capture is not None and capture.warning else ()
            for note in notes:
                logger.warning("%s: %s", _where(flow), note)
            undecodable = capture.undecodable if capture is not None else None
            return self.writer.put(raw_exchange(flow, recording.request, events, error, notes, undecodable))
        except Exception:  # observing must never break the user's traffic
            logger.exception("could not record %s", _where(flow))
            return None


def _where(flow: http.HTTPFlow) -> str:
    """The request for a log line: without its query string, which may hold a key."""
    request = flow.request
    return f"{request.method} {request.scheme}://{request.pretty_host}{request.path.split('?', 1)[0]}"
