"""The OTLP export: each call's span and the run's metrics sent over OTLP/HTTP (protobuf), written by
`llmproxy.telemetry.wire` from llmproxy's own records — no OpenTelemetry SDK, nothing to install.

Spans: each call becomes one CLIENT span with the times it began and ended, a child of the client's
`traceparent` when it sent one. Calls wait in a bounded queue for this module's own thread, which makes their
spans and sends them in batches, so a collector that is down, slow or answering 500 holds only that thread.
After a failed send the thread waits before it tries again (a second, doubling up to `PAUSE_MOST`), and tries a
connection before it makes any span; meanwhile calls wait in the queue, and once it is full they are dropped
and counted (`dropped`), as are the spans of a batch the collector did not take. The first loss is one warning
line.

Metrics: the registry's series and gauges (the same figures `/metrics` shows), sent every
`OTEL_METRIC_EXPORT_INTERVAL` milliseconds (a minute by default) by the same thread, and once more at the end;
not at all when `OTEL_METRICS_EXPORTER` is `none`.

The export connects to the collector directly: not through a proxy the environment names (the run's own
proxy variables point at llmproxy itself).
"""

import gzip
import http.client
import logging
import os
import ssl
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import BinaryIO, Final
from urllib.parse import urlsplit

from llmproxy import __version__
from llmproxy.meter import Call
from llmproxy.telemetry.conventions import Facts, attributes, attributes_shape, duplicate_old_names
from llmproxy.telemetry.metrics import Registry
from llmproxy.telemetry.served import Served
from llmproxy.telemetry.settings import Destination, destination, metric_interval, metrics_exported, resource
from llmproxy.telemetry.wire import Encoder

logger = logging.getLogger(__name__)

QUEUE: Final = 4096  # calls waiting for the exporting thread; beyond, dropped and counted
BATCH: Final = 512  # spans in one export at most
LINGER: Final = 1.0  # seconds a batch waits for more calls before it is sent
CLOSING: Final = 5.0  # seconds the end of a run waits for what is still queued to be sent
PAUSE: Final = 1.0  # seconds the thread waits after a failed send before it tries again; doubled each time
PAUSE_MOST: Final = 30.0
SCOPE: Final = "llmproxy"
SHAPES: Final = 1024  # shapes of call whose encoded span attributes are kept; past that, start again
LINE: Final = 65537  # bytes of an answer's line at most (http.client's limit)

type Item = tuple[Call, Facts, Served | None]


class Sender:
    """POSTs to one OTLP/HTTP endpoint, on one kept-alive connection. http.client opens the connection (TLS, the
    timeout); the request and its answer are written and read here: an OTLP answer needs only its status, its
    framing and whether the connection stays open, and http.client's parsing of its headers as an email
    message cost more than the spans of a batch (scripts/bench/telemetry.py --callgrind)."""

    def __init__(self, where: Destination) -> None:
        parts = urlsplit(where.url)
        self.where = where
        self._host = parts.hostname or ""
        self._port = parts.port
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._context: ssl.SSLContext | None = None
        if parts.scheme == "https":
            self._context = ssl.create_default_context(cafile=where.certificate)
            if where.client_certificate is not None:
                self._context.load_cert_chain(where.client_certificate, where.client_key)
        host = f"[{self._host}]" if ":" in self._host else self._host
        if self._port is not None and self._port != (443 if self._context is not None else 80):
            host += f":{self._port}"
        headers = {
            "Host": host,
            "Accept-Encoding": "identity",
            "Content-Type": "application/x-protobuf",
            "User-Agent": f"llmproxy/{__version__}",
            **dict(where.headers),
        }
        if where.gzip:
            headers["Content-Encoding"] = "gzip"
        head = f"POST {path} HTTP/1.1\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self._head = (head + "Content-Length: ").encode("latin-1")
        self._connection: http.client.HTTPConnection | None = None
        self._answers: BinaryIO | None = None  # the connection's answers, read as they come

    def connect(self) -> None:
        """Open the connection unless it is open; raises OSError when the collector cannot be reached."""
        if self._connection is not None:
            return
        connection: http.client.HTTPConnection
        if self._context is not None:
            connection = http.client.HTTPSConnection(
                self._host, self._port, timeout=self.where.timeout, context=self._context
            )
        else:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=self.where.timeout)
        try:
            connection.connect()
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        self._answers = connection.sock.makefile("rb")

    def post(self, body: bytes) -> bool:
        """Whether the collector took `body` (a 2xx answer); raises OSError or HTTPException when it could
        not be sent or answered. A kept-alive connection the collector has closed meanwhile is opened again."""
        if self.where.gzip:
            body = gzip.compress(body, compresslevel=5)
        request = self._head + str(len(body)).encode() + b"\r\n\r\n" + body
        while True:
            fresh = self._connection is None
            self.connect()
            connection, answers = self._connection, self._answers
            assert connection is not None
            assert answers is not None
            try:
                connection.sock.sendall(request)
                status, closing = answer(answers)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if fresh:
                    raise
                continue
            except BaseException:
                self.close()
                raise
            if closing:
                self.close()
            return 200 <= status < 300

    def close(self) -> None:
        if self._answers is not None:
            self._answers.close()
            self._answers = None
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def answer(answers: BinaryIO) -> tuple[int, bool]:
    """The status of the next HTTP/1.1 answer on `answers` (its body read past: by its length, its chunks, or
    to the end), and whether the collector closes the connection after it. Raises RemoteDisconnected when the
    connection ends before an answer, HTTPException when what comes is not one."""
    try:
        while True:
            line = answers.readline(LINE)
            if not line:
                raise http.client.RemoteDisconnected("the collector closed the connection without an answer")
            version, _, rest = line.partition(b" ")
            if not version.startswith(b"HTTP/"):
                raise http.client.BadStatusLine(line.decode("latin-1"))
            status = int(rest[:3])
            length, chunked, closing = None, False, version == b"HTTP/1.0"
            while (header := answers.readline(LINE)) not in (b"\r\n", b"\n", b""):
                name, _, value = header.partition(b":")
                name, value = name.strip().lower(), value.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"transfer-encoding":
                    chunked = b"chunked" in value
                elif name == b"connection":
                    closing = b"close" in value or (closing and b"keep-alive" not in value)
            if status >= 200:
                break
        if chunked:
            while (size := int(answers.readline(LINE).split(b";")[0], 16)) > 0:
                _exactly(answers, size + 2)  # the chunk and its line end
            while answers.readline(LINE) not in (b"\r\n", b"\n", b""):  # the trailer
                pass
        elif length is not None:
            _exactly(answers, length)
        elif status not in (204, 304):
            answers.read()  # framed by the connection's end
            closing = True
    except ValueError as error:
        raise http.client.HTTPException(f"not an HTTP answer: {error}") from None
    return status, closing


def _exactly(answers: BinaryIO, count: int) -> None:
    if len(read := answers.read(count)) < count:
        raise http.client.IncompleteRead(read, count - len(read))


class OtlpExport:
    """Spans of the calls `add`ed, and `registry`'s metrics, sent to `endpoint` (None: as the
    `OTEL_EXPORTER_OTLP_*` variables say). `run`: the run's own attributes, on every span. `pause`: wait after
    a failed send (a proxy); without it, go on at once (a recorded run, sent after the fact)."""

    def __init__(
        self,
        endpoint: str | None,
        run: Sequence[tuple[str, str]] = (),
        registry: Registry | None = None,
        environ: Mapping[str, str] = os.environ,
        pause: bool = True,
    ) -> None:
        self.run = dict(run)
        self.duplicate = duplicate_old_names(environ)
        self.dropped = 0
        self._warned = False
        self._closed = False
        self._in_flight = 0
        self._pausing = pause
        self._failures = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._waiting: deque[Item] = deque()  # calls waiting for the thread: appended and taken without a lock
        self._wake = threading.Event()
        described = resource(environ)
        described.setdefault("service.version", __version__)
        self._encoder = Encoder(described, SCOPE, __version__)
        self._shapes: dict[tuple[object, ...], bytes] = {}  # the export thread's alone
        self._spans = Sender(destination("traces", endpoint, environ))
        self._metrics = None
        if registry is not None and metrics_exported(environ):
            self._metrics = (registry, Sender(destination("metrics", endpoint, environ)))
        self._interval = metric_interval(environ)
        self._thread = threading.Thread(target=self._work, name="llmproxy-otlp", daemon=True)
        self._thread.start()

    def add(self, call: Call, facts: Facts, wait: bool = False, served: Served | None = None) -> None:
        """Queue a call's span: an append, nothing more on the request's path (the thread takes what waits
        every `LINGER` seconds, or once a batch's worth waits). A proxy's calls never wait: a full queue drops
        the call, counted; `wait`: wait for room instead (a recorded run, sent after the fact). `served`: the
        recorded reply it was, which keeps its span but the ids and times."""
        waiting = self._waiting
        while len(waiting) >= QUEUE:
            if not wait or not self._thread.is_alive():
                self.drop()
                return
            time.sleep(0.01)
        waiting.append((call, facts, served))
        if len(waiting) == BATCH:
            self._wake.set()

    @property
    def full(self) -> bool:
        """Whether a call `add`ed now would be dropped (without `wait`)."""
        return len(self._waiting) >= QUEUE

    def drop(self) -> None:
        """Count a call dropped for want of room in the queue (`full`), not queued."""
        self._lost(1, "the export queue is full")

    def close(self, patience: float = CLOSING) -> None:
        """Send what is queued (waiting `patience` seconds at most) and the last metrics, and stop."""
        self._stopping.set()
        self._wake.set()
        self._thread.join(patience)
        with self._lock:
            alive = self._thread.is_alive()
            left = len(self._waiting) + (self._in_flight if alive else 0)
            self._closed = alive  # what the thread still does is not counted twice
        if left:
            self._lost(left, "the run ended before they were sent", closing=True)
        self._spans.close()
        if self._metrics is not None:
            self._metrics[1].close()

    def _work(self) -> None:
        next_metrics = time.monotonic() + self._interval
        waiting = self._waiting
        while True:
            ending = self._stopping.is_set()
            if not ending:
                self._wake.wait(LINGER)
                self._wake.clear()
            due = len(waiting)  # what came meanwhile waits for the next turn: batches stay large
            while due > 0 or (ending and waiting):
                batch = [waiting.popleft() for _ in range(min(len(waiting), BATCH))]
                due -= len(batch)
                self._send_spans(batch)
            if ending:
                break
            if time.monotonic() >= next_metrics:
                self._send_metrics()
                next_metrics = time.monotonic() + self._interval
        self._send_metrics()

    def _send_spans(self, batch: list[Item]) -> None:
        with self._lock:
            self._in_flight = len(batch)
        try:
            self._spans.connect()  # a collector that is not there costs no span made
            body = self._encoder.traces([self._span(call, facts, served) for call, facts, served in batch])
            taken = self._spans.post(body)
        except Exception:  # telemetry observes: what fails here is counted, never raised
            logger.debug("exporting %d spans failed", len(batch), exc_info=True)
            taken = False
        with self._lock:
            self._in_flight = 0
        if taken:
            self._failures = 0
            return
        self._lost(len(batch), "the collector did not take them")
        self._pause()

    def _span(self, call: Call, facts: Facts, served: Served | None) -> bytes:
        """A call's span; of a recorded reply served again (`served`), its kept tail joined to its ids and times
        (made again when its price is not the one it was made with)."""
        encoder = self._encoder
        if served is None:
            return encoder.span(call, facts, self._attributes(call, facts))
        kept = served.span
        if kept is None or kept[0] != call.cost_usd or kept[1] != call.unpriced:
            untimed = encoder.untimed(call, facts, self._attributes(call, facts))
            kept = served.span = (call.cost_usd, call.unpriced, untimed)
        return encoder.timed(call, facts, kept[2])

    def _attributes(self, call: Call, facts: Facts) -> bytes:
        """A call's span attributes, encoded; kept by the call's shape (`attributes_shape`), for the calls of
        that shape to come — a recording replayed again and again has one. Not with the messages on the spans:
        those are every call's own."""
        if facts.input_messages is not None or facts.output_messages is not None:
            return self._encoder.attributes(attributes(call, facts, self.run, self.duplicate))
        shape = attributes_shape(call, facts)
        encoded = self._shapes.get(shape)
        if encoded is None:
            if len(self._shapes) >= SHAPES:
                self._shapes.clear()
            encoded = self._shapes[shape] = self._encoder.attributes(attributes(call, facts, self.run, self.duplicate))
        return encoded

    def _send_metrics(self) -> None:
        if self._metrics is None:
            return
        registry, sender = self._metrics
        body = self._encoder.metrics(registry.series(), registry.gauges(), registry.started, time.time_ns())
        try:
            taken = sender.post(body)
        except Exception:
            logger.debug("exporting the metrics failed", exc_info=True)
            taken = False
        if not taken:
            self._warn("the OTLP collector did not take the metrics")

    def _pause(self) -> None:
        """After a failed send: wait before the next (unless the run is ending), calls queueing meanwhile."""
        if not self._pausing:
            return
        self._failures += 1
        self._stopping.wait(min(PAUSE * 2 ** (self._failures - 1), PAUSE_MOST))

    def _lost(self, count: int, why: str, closing: bool = False) -> None:
        with self._lock:
            if self._closed and not closing:
                return
            self.dropped += count
        self._warn(f"telemetry spans dropped: {why} (counted in llmproxy.telemetry.dropped_spans; no more warnings)")

    def _warn(self, message: str) -> None:
        with self._lock:
            if self._warned:
                return
            self._warned = True
        logger.warning("%s", message)
