"""`--llmproxy-block-network`: while a test that does not record runs, this process reaches 127.0.0.1 (and Unix
sockets) and nothing else — not by a socket's `connect` or `connect_ex`, not by a datagram's `sendto`, not even
by a name lookup (`getaddrinfo`), which would already tell a DNS server what the test meant to reach. Each
attempt raises `NetworkBlocked` and is also kept, so a client that swallows the error still fails the test.

Tests that record (modes once without a cassette, new_episodes, all, rewrite) need the network and get it.
Subprocesses are not patched: they get the proxy variables, and the proxy refuses what they send (document:
docs/pytest.md).
"""

import ipaddress
import socket
import threading
from collections.abc import Callable
from typing import Any, Final

LOCAL_NAMES: Final = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class NetworkBlocked(RuntimeError):
    """Not an OSError, on purpose: HTTP clients turn those into retries and "connection failed" messages."""


def is_local(host: object) -> bool:
    """127.0.0.0/8, ::1 or a name for them; a name never goes to a resolver to find out."""
    if host is None:
        return True
    name = host.decode() if isinstance(host, bytes) else str(host)
    if name.lower().rstrip(".") in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


class Blocker:
    """Installed once (`install`), it blocks only while `blocking` is true."""

    def __init__(self) -> None:
        self.blocking = False
        self.attempts: list[str] = []  # since the last `take`
        self._lock = threading.Lock()
        self._saved: dict[str, Any] = {}

    @property
    def installed(self) -> bool:
        return bool(self._saved)

    def install(self) -> None:
        if self._saved:
            return
        self._saved = {
            "connect": socket.socket.connect,
            "connect_ex": socket.socket.connect_ex,
            "sendto": socket.socket.sendto,
            "getaddrinfo": socket.getaddrinfo,
        }
        socket.socket.connect = self._guard_socket(self._saved["connect"])  # type: ignore[method-assign]
        socket.socket.connect_ex = self._guard_socket(self._saved["connect_ex"])  # type: ignore[method-assign]
        socket.socket.sendto = self._guard_sendto(self._saved["sendto"])  # type: ignore[method-assign]
        socket.getaddrinfo = self._guard_lookup(self._saved["getaddrinfo"])

    def uninstall(self) -> None:
        for name, original in self._saved.items():
            setattr(socket if name == "getaddrinfo" else socket.socket, name, original)
        self._saved = {}

    def take(self) -> list[str]:
        """The attempts blocked since the last call."""
        with self._lock:
            attempts, self.attempts = self.attempts, []
        return attempts

    def _check(self, host: object, port: object, how: str) -> None:
        if not self.blocking or is_local(host):
            return
        attempt = f"{how} {host}:{port}" if port is not None else f"{how} {host}"
        with self._lock:
            self.attempts.append(attempt)
        raise NetworkBlocked(
            f"llmproxy blocked {attempt}: --llmproxy-block-network lets a test that replays reach 127.0.0.1 only"
            " (record the cassette with --llmproxy-mode once, or send the client through the `llmproxy` fixture)"
        )

    def _guard_socket(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(sock: socket.socket, address: Any, *args: Any) -> Any:
            if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
                self._check(address[0], address[1], "a connection to")
            return original(sock, address, *args)

        return guarded

    def _guard_sendto(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(sock: socket.socket, data: Any, *args: Any) -> Any:
            address = args[-1] if args else None
            if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
                self._check(address[0], address[1], "a datagram to")
            return original(sock, data, *args)

        return guarded

    def _guard_lookup(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            self._check(host, None, "a name lookup of")
            return original(host, port, *args, **kwargs)

        return guarded
