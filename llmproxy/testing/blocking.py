"""`--llmproxy-block-network`: while a test that does not record runs, this process reaches 127.0.0.1 (and Unix
sockets) and nothing else. Every way Python's `socket` module reaches out is guarded: a socket's `connect`
and `connect_ex`, a datagram's `sendto` and `sendmsg`, and every name service call that may ask a server —
`getaddrinfo`, `gethostbyname`, `gethostbyname_ex`, `gethostbyaddr`, and `getnameinfo` unless it is asked
for numbers only — since a lookup alone already tells a DNS server what the test meant to reach. Each attempt
raises `NetworkBlocked` and is also kept, so a client that swallows the error still fails the test.

Loopback addresses, `localhost` and this machine's own name (servers bound to every interface look it up to
name themselves: `http.server`, `socket.getfqdn()`) are let through, and so is what `--llmproxy-allow-host`
names: a name's lookups, and the addresses they gave (the proxy, in this process, connects there for a test).
Tests that record (modes once without a cassette, new_episodes, all, rewrite) need the network and get it.
Subprocesses are not patched: they get the proxy variables, and the proxy refuses what they send
(docs/pytest.md).
"""

import socket
import threading
from collections.abc import Callable
from typing import Any, Final

from llmproxy.egress import EgressPolicy, is_loopback


class NetworkBlocked(RuntimeError):
    """Not an OSError, on purpose: HTTP clients turn those into retries and "connection failed" messages."""


def is_local(host: object, own_name: str = "") -> bool:
    """127.0.0.0/8, ::1, or a name for them (or `own_name`, this machine's); a name never goes to a resolver to
    find out."""
    if host is None:
        return True
    name = (host.decode() if isinstance(host, bytes) else str(host)).lower().rstrip(".")
    return bool(own_name and name == own_name.lower()) or is_loopback(name)


# Where each guarded socket method is given its address: (positional index after `self`; -1 is the last one)
SOCKET_METHODS: Final = {
    "connect": (0, "a connection to"),
    "connect_ex": (0, "a connection to"),
    "sendto": (-1, "a datagram to"),  # sendto(data, address) or sendto(data, flags, address)
    "sendmsg": (3, "a datagram to"),  # sendmsg(buffers, ancdata, flags, address)
}
# The name service calls that may ask a server, and where their host is
LOOKUPS: Final = ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo")


class Blocker:
    """Installed once (`install`), it blocks only while `blocking` is true."""

    def __init__(self, allowed: EgressPolicy | None = None) -> None:
        """`allowed`: what `--llmproxy-allow-host` lets a test that replays reach."""
        self.blocking = False
        self.allowed = allowed or EgressPolicy()
        self.attempts: list[str] = []  # since the last `take`
        self._lock = threading.Lock()
        self._saved: dict[tuple[object, str], Any] = {}
        self._own_name = ""
        self._learned: set[str] = set()  # the addresses lookups of allowed names gave

    @property
    def installed(self) -> bool:
        return bool(self._saved)

    def install(self) -> None:
        if self._saved:
            return
        self._own_name = socket.gethostname()
        for name, (where, how) in SOCKET_METHODS.items():
            original = self._saved[socket.socket, name] = getattr(socket.socket, name)
            setattr(socket.socket, name, self._guard_socket(original, where, how))
        for name in LOOKUPS:
            original = self._saved[socket, name] = getattr(socket, name)
            setattr(socket, name, self._guard_lookup(original, name))

    def uninstall(self) -> None:
        for (owner, name), original in self._saved.items():
            setattr(owner, name, original)
        self._saved = {}

    def take(self) -> list[str]:
        """The attempts blocked since the last call."""
        with self._lock:
            attempts, self.attempts = self.attempts, []
        return attempts

    def _check(self, host: object, port: object, how: str) -> None:
        if not self.blocking or is_local(host, self._own_name) or self._allows(host, port):
            return
        attempt = f"{how} {host}:{port}" if port is not None else f"{how} {host}"
        with self._lock:
            self.attempts.append(attempt)
        raise NetworkBlocked(
            f"llmproxy blocked {attempt}: --llmproxy-block-network lets a test that replays reach 127.0.0.1 only"
            " (record the cassette with --llmproxy-mode once, or send the client through the `llmproxy` fixture)"
        )

    def _guard_socket(self, original: Callable[..., Any], where: int, how: str) -> Callable[..., Any]:
        def guarded(sock: socket.socket, *args: Any) -> Any:
            address = args[where] if -len(args) <= where < len(args) else None
            if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
                self._check(address[0], address[1], how)
            return original(sock, *args)

        return guarded

    def _allows(self, host: object, port: object) -> bool:
        """Whether `--llmproxy-allow-host` lets this out: a name (or address) an entry names, on the entry's port
        (a lookup has none); an address a lookup of an allowed name gave."""
        if not self.allowed.entries or not isinstance(host, str | bytes):
            return False
        name = host.decode() if isinstance(host, bytes) else host
        on = port if isinstance(port, int) else None
        return self.allowed.names(name, on) or (on is not None and name.partition("%")[0] in self._learned)

    def _learn(self, host: Any, found: Any) -> None:
        """The addresses a lookup of an allowed name gave, which the connection that follows will go to."""
        if not self._allows(host, None):
            return
        if isinstance(found, str):  # gethostbyname
            addresses = [found]
        elif isinstance(found, tuple) and len(found) == 3:  # gethostbyname_ex
            addresses = list(found[2])
        else:  # getaddrinfo: (family, type, proto, canonname, sockaddr)
            addresses = [str(info[4][0]) for info in found if isinstance(info, tuple) and len(info) == 5]
        with self._lock:
            self._learned.update(address.partition("%")[0] for address in addresses)

    def _guard_lookup(self, original: Callable[..., Any], name: str) -> Callable[..., Any]:
        def guarded(host: Any, *args: Any, **kwargs: Any) -> Any:
            if name != "getnameinfo":
                self._check(host, None, f"a name lookup ({name}) of")
            elif isinstance(host, tuple) and not (
                args and isinstance(args[0], int) and args[0] & socket.NI_NUMERICHOST
            ):
                self._check(host[0], None, "a reverse lookup (getnameinfo) of")  # numbers only ask no server
            found = original(host, *args, **kwargs)
            if name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex"):
                self._learn(host, found)
            return found

        return guarded
