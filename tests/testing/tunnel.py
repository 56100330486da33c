"""A corporate proxy, in miniature, on 127.0.0.1 (a configuration of the one loopback server): it asks for
credentials, and opens the tunnel a CONNECT asks for to one place whatever the name (the stand-in upstream: this
machine resolves no public name), noting each CONNECT it was sent and the credentials it came with."""

import socket
import threading

from tests.conformance.server import LoopbackServer, Received, Reply


class Tunnel(LoopbackServer):
    def __init__(self, to: tuple[str, int], authorization: str) -> None:
        self.to = to
        self.authorization = authorization
        self.connects: list[tuple[str, str | None]] = []  # (the CONNECT's target, its Proxy-Authorization)
        super().__init__(answer=self._answer)

    def _answer(self, received: Received) -> Reply:
        given = received.headers.get("proxy-authorization")
        self.connects.append((received.path, given))
        if received.method != "CONNECT" or given != self.authorization:
            return Reply(407, {"proxy-authenticate": 'Basic realm="corp"'})
        return Reply(takeover=self._tunnel)

    def _tunnel(self, client: socket.socket) -> None:
        with socket.create_connection(self.to) as upstream:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            pipe = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
            pipe.start()
            _pipe(client, upstream)
            pipe.join(5)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass
