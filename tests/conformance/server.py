"""A loopback HTTP/1.1 server that answers with queued replies, for driving the official SDKs.

Streams are sent with chunked transfer encoding, one chunk per wire event, flushed as they go, so SDK
stream parsers see real incremental delivery. Every request is kept for assertions. A queued reply may be
a function of the request it answers (a mock that encodes in the shape the request asked for).
"""

import ssl
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    events: list[bytes] | None = None  # a stream: each element one chunk on the wire
    hold_last: threading.Event | None = None  # a stream waits for this before sending its last event
    interval: float = 0.0  # seconds between a stream's events


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


type Answer = Reply | Callable[[Received], Reply]


class LoopbackServer:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        """`tls`: serve HTTPS with this server context instead of plain HTTP."""
        self.replies: deque[Answer] = deque()
        self.received: list[Received] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                received = Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                server.received.append(received)
                reply = server.replies.popleft() if server.replies else Reply(599, body=b"no reply queued")
                if callable(reply):
                    reply = reply(received)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.events is None:
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for index, event in enumerate(reply.events):
                    if reply.hold_last is not None and index == len(reply.events) - 1:
                        reply.hold_last.wait(10)
                    if index and reply.interval:
                        time.sleep(reply.interval)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            do_GET = _serve
            do_POST = _serve

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 128  # tests open dozens of connections at once

            def handle_error(self, request: object, client_address: object) -> None:
                # SDK streams may close the connection after their last event, before the chunked body's
                # end: expected, not worth a traceback.
                if not isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
                    super().handle_error(request, client_address)  # type: ignore[arg-type]

        self._httpd = Server(("127.0.0.1", 0), Handler)
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"{self.scheme}://{host}:{port}"

    def queue(self, *replies: Answer) -> None:
        self.replies.extend(replies)

    def __enter__(self) -> "LoopbackServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
