"""What a TLS client asks for before the handshake starts: the server name (SNI) and the application protocols
(ALPN) of its ClientHello, read from the bytes it sent without answering them. The lean door reads them to choose
a certificate and to know whether it can serve the connection at all (a client that offers only HTTP/2 it
cannot); the bytes stay where they are for whoever does the handshake.

Only what those two questions need is read: the record layer (the hello may span several records), the hello's
fixed fields skipped by their lengths, and the two extensions.
"""

from dataclasses import dataclass

_HANDSHAKE = 0x16
_CLIENT_HELLO = 0x01
_SERVER_NAME = 0x0000
_ALPN = 0x0010
MAX_HELLO = 64 * 1024  # a ClientHello is a few KB; more than this is not one


class NotTls(ValueError):
    """The bytes are no TLS ClientHello."""


@dataclass(frozen=True, slots=True)
class ClientHello:
    sni: str | None  # the host name the client asked for (None: none, as for an address)
    alpn: tuple[str, ...]  # the protocols it offers, in its order (empty: it offers none)

    @property
    def speaks_http1(self) -> bool:
        """Whether HTTP/1.1 will do: it is offered, or nothing is (ALPN absent means HTTP/1.1)."""
        return not self.alpn or "http/1.1" in self.alpn


def parse(data: bytes) -> ClientHello | None:
    """The ClientHello at the start of `data`; None while more bytes are needed. Raises NotTls when `data`
    cannot be the start of one."""
    if not data:
        return None
    if data[0] != _HANDSHAKE:
        raise NotTls("not a TLS handshake record")
    handshake = bytearray()
    at = 0
    while True:  # gather the handshake message from as many records as it spans
        if len(data) < at + 5:
            return None
        if data[at] != _HANDSHAKE or data[at + 1] != 3:
            raise NotTls("not a TLS handshake record")
        length = int.from_bytes(data[at + 3 : at + 5])
        if len(data) < at + 5 + length:
            return None
        handshake += data[at + 5 : at + 5 + length]
        at += 5 + length
        if len(handshake) >= 4:
            if handshake[0] != _CLIENT_HELLO:
                raise NotTls("the first handshake message is no ClientHello")
            needed = 4 + int.from_bytes(handshake[1:4])
            if needed > MAX_HELLO:
                raise NotTls("a ClientHello larger than 64 KB")
            if len(handshake) >= needed:
                return _hello(bytes(handshake[4:needed]))
        if at > MAX_HELLO:
            raise NotTls("no ClientHello within 64 KB")


def _hello(body: bytes) -> ClientHello:
    try:
        at = 2 + 32  # version, random
        at += 1 + body[at]  # session id
        at += 2 + int.from_bytes(body[at : at + 2])  # cipher suites
        at += 1 + body[at]  # compression methods
        if at >= len(body):  # no extensions
            return ClientHello(None, ())
        end = at + 2 + int.from_bytes(body[at : at + 2])
        at += 2
        sni: str | None = None
        alpn: tuple[str, ...] = ()
        while at + 4 <= end:
            kind, size = int.from_bytes(body[at : at + 2]), int.from_bytes(body[at + 2 : at + 4])
            extension = body[at + 4 : at + 4 + size]
            at += 4 + size
            if kind == _SERVER_NAME:
                sni = _server_name(extension)
            elif kind == _ALPN:
                alpn = _protocols(extension)
        return ClientHello(sni, alpn)
    except (IndexError, UnicodeDecodeError) as error:
        raise NotTls(f"a malformed ClientHello: {error}") from error


def _server_name(extension: bytes) -> str | None:
    at, end = 2, 2 + int.from_bytes(extension[0:2])
    while at + 3 <= end:
        kind, size = extension[at], int.from_bytes(extension[at + 1 : at + 3])
        if kind == 0:  # host_name
            return extension[at + 3 : at + 3 + size].decode("ascii")
        at += 3 + size
    return None


def _protocols(extension: bytes) -> tuple[str, ...]:
    protocols = []
    at, end = 2, 2 + int.from_bytes(extension[0:2])
    while at < end:
        size = extension[at]
        protocols.append(extension[at + 1 : at + 1 + size].decode("ascii"))
        at += 1 + size
    return tuple(protocols)
