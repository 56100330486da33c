"""A corporate proxy, in miniature, on 127.0.0.1: it asks for credentials, and opens the tunnel a CONNECT asks for
to one place whatever the name (the stand-in upstream: this machine resolves no public name), noting each CONNECT
it was sent and the credentials it came with."""

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Tunnel:
    def __init__(self, to: tuple[str, int], authorization: str) -> None:
        self.connects: list[tuple[str, str | None]] = []  # (the CONNECT's target, its Proxy-Authorization)
        tunnel = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_CONNECT(self) -> None:
                given = self.headers.get("proxy-authorization")
                tunnel.connects.append((self.path, given))
                if given != authorization:
                    self.send_response(407)
                    self.send_header("proxy-authenticate", 'Basic realm="corp"')
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                with socket.create_connection(to) as upstream:
                    self.send_response(200)
                    self.end_headers()
                    self.wfile.flush()
                    pipe = threading.Thread(target=_pipe, args=(upstream, self.connection), daemon=True)
                    pipe.start()
                    _pipe(self.connection, upstream)
                    pipe.join(5)
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def __enter__(self) -> "Tunnel":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass
