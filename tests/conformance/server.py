"""The test suite's one local HTTP stand-in: a threaded HTTP/1.1 server on the loopback address (HTTPS when
given a TLS context) that answers each request with the next queued reply, or with `answer` when none is
queued, and keeps every request it received. The tests' upstreams are configurations of it (bar a plain
WebSocket echo, which the `websockets` library serves): the SDK conformance tests queue replies, the coding
CLIs' scripted session (tests/e2e/clis.py) answers by the request's API and takes WebSocket upgrades over,
the pytest plugin's stand-in API (tests/testing/upstream.py) answers everything and counts, and a corporate
proxy in miniature (tests/testing/tunnel.py) answers CONNECT.

Streams are sent with chunked transfer encoding, one chunk per wire event, flushed as they go (`interval`
seconds apart, the last one held back until `hold_last` is set), so SDK stream parsers see real incremental
delivery. A reply may be a function of the request it answers (a mock that encodes in the shape the request
asked for); it may hang up instead of answering, or take the connection over. The server binds port 0 itself,
so no other process can take its port between a probe and the bind: `url` and `port` say which it got.
"""

import socket
import ssl
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    events: list[bytes] | None = None  # a stream: each element one chunk on the wire
    hold_last: threading.Event | None = None  # a stream waits for this before sending its last event
    interval: float = 0.0  # seconds between a stream's events
    hang_up: bool = False  # close the connection without answering
    # run the connection from here on (a WebSocket upgrade), until it ends; it is closed afterwards
    takeover: Callable[[socket.socket], None] | None = None


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]  # by lower-case name
    body: bytes
    head: bytes = b""  # the request line and headers as they came, for a takeover that reads them again


type Answer = Reply | Callable[[Received], Reply]

NO_REPLY = Reply(599, body=b"no reply queued")


class LoopbackServer:
    def __init__(
        self, tls: ssl.SSLContext | None = None, *, answer: Answer = NO_REPLY, host: str = "127.0.0.1"
    ) -> None:
        """`tls`: serve HTTPS with this server context instead of plain HTTP. `answer`: what a request gets when
        no reply is queued. `host`: the loopback address to listen on (`::1` for IPv6)."""
        self.replies: deque[Answer] = deque()
        self.answer = answer
        self.received: list[Received] = []
        self.connections = 0  # accepted TCP connections, whether a request came on them or not
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                lines = [self.requestline, *(f"{name}: {value}" for name, value in self.headers.items())]
                head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
                headers = {k.lower(): v for k, v in self.headers.items()}
                received = Received(self.command, self.path, headers, body, head)
                server.received.append(received)
                reply = server.replies.popleft() if server.replies else server.answer
                if callable(reply):
                    reply = reply(received)
                if reply.hang_up or reply.takeover is not None:
                    if reply.takeover is not None:
                        reply.takeover(self.connection)
                    self.close_connection = True
                    return
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
            do_CONNECT = _serve  # a proxy's tunnel: the reply takes the connection over

        class Server(ThreadingHTTPServer):
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
            daemon_threads = True
            request_queue_size = 128  # tests open dozens of connections at once

            def verify_request(self, request: Any, client_address: Any) -> bool:
                server.connections += 1
                return True

            def handle_error(self, request: object, client_address: object) -> None:
                # SDK streams may close the connection after their last event, before the chunked body's
                # end: expected, not worth a traceback.
                if not isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
                    super().handle_error(request, client_address)  # type: ignore[arg-type]

        self._httpd = Server((host, 0), Handler)
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        host = str(self._httpd.server_address[0])
        return f"{self.scheme}://{f'[{host}]' if ':' in host else host}:{self.port}"

    def queue(self, *replies: Answer) -> None:
        self.replies.extend(replies)

    def start(self) -> Self:
        self._thread.start()
        return self

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
