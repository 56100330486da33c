"""The lean door: llmproxy's forward proxy (`HTTPS_PROXY`) when the chain answers without an upstream — strict
replay, the mock — serving each connection itself, without mitmproxy (docs/architecture.md#one-chain-three-doors).

It speaks the forward-proxy protocol: a `CONNECT host:port` is answered `200 Connection established`, the
client's TLS ClientHello is read without being consumed (`llmproxy.client_hello`: its SNI and ALPN), and when
the chain will answer everything for that host (the network does not take it), TLS is terminated with a
certificate for the host from llmproxy's CA (`llmproxy.leaf_certificates`, ALPN `http/1.1`) and HTTP/1.1 and
the WebSocket are served by the relay's connection code (`http_connection`), each request an `Incoming` made as
the proxy door makes it from a mitmproxy flow, so that answers are the same byte for byte. A plain-HTTP request
in absolute form (`GET http://host/path`) is served the same way, without TLS.

What it cannot serve is handed to mitmproxy, unseen by the client: a host the network may reach (`--allow-host`,
this machine's own services for a command llmproxy runs), a client that offers only HTTP/2, bytes after a CONNECT
that are no TLS. mitmproxy is started the first time that happens (`Fallback`), on a loopback port, and the
connection is spliced to it: the CONNECT line sent again, its answer swallowed (the client had one), then every
byte piped both ways, the ClientHello first (it was never taken off the socket).

Bad input gets one clear line and a closed connection; the door serves on.
"""

import asyncio
import contextlib
import logging
import socket
import ssl
import weakref
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Final
from urllib.parse import urlsplit

from llmproxy.cassette.decoding import decode_body
from llmproxy.chain import Chain, Context, Door, Incoming, Reply, ReplySource
from llmproxy.chain.incoming import Upstream
from llmproxy.chain.reply import reason_phrase, text_reply
from llmproxy.client_hello import MAX_HELLO, NotTls, parse
from llmproxy.destinations import Destination
from llmproxy.egress import Refused
from llmproxy.http import DEFAULT_PORTS
from llmproxy.leaf_certificates import LeafCertificates
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.compatible import LOOPBACK_HOSTS
from llmproxy.providers.origins import origin_for
from llmproxy.providers.registry import websocket_codec
from llmproxy.providers.routes import detect
from llmproxy.providers.websocket import WebSocketCodec
from llmproxy_addons.http_connection import HttpConnection, ParsedRequest, close_server
from llmproxy_addons.lean_forward import Forward
from llmproxy_addons.upstream_client import Server, UpstreamClient

logger = logging.getLogger(__name__)

MAX_CONNECT_HEAD: Final = 64 * 1024  # a CONNECT request's head (or a plain request's first line) beyond this: 431
_HANDSHAKE_TIMEOUT: Final = 30.0  # from accepting a connection to the first request it serves
_POLL: Final = 0.005  # a part of a head or of a ClientHello came: look again this much later
_ESTABLISHED: Final = b"HTTP/1.1 200 Connection established\r\n\r\n"

type Fallback = Callable[[], int]  # starts mitmproxy (blocking, once) and says its loopback port


class _Closed(Exception):
    """The client went away (or stayed silent too long) before its connection was served."""


class LeanDoor:
    def __init__(
        self,
        chain: Chain,
        certificates: LeafCertificates,
        fallback: Fallback,
        host: str = "127.0.0.1",
        port: int = 0,
        base_url_port: int | None = None,
        upstream: UpstreamClient | None = None,
        mapped: Mapping[str, Destination] | None = None,
    ) -> None:
        """Listens at once (so `port` is known before the loop serves); raises OSError when the port is taken.
        `base_url_port`: llmproxy's own base-URL listener, which a plain-HTTP request through the proxy may name.
        `upstream`: a session that records — what the chain sends upstream goes out from here, on its
        connections, to where `mapped` (`--map`, by host) sends it."""
        self.chain = chain
        self.upstream = upstream
        self.mapped = {host.lower(): destination for host, destination in (mapped or {}).items()}
        self.certificates = certificates
        self.context = Context(Door.PROXY)
        self.base_url_port = base_url_port
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.create_server((host, port), family=family, backlog=1024)
        self._socket.setblocking(False)
        address = self._socket.getsockname()
        self.url = f"http://{f'[{address[0]}]' if ':' in address[0] else address[0]}:{address[1]}"
        self._fallback = fallback
        self._fallback_port: asyncio.Future[int] | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._handling: set[asyncio.Task[None]] = set()
        self._open: weakref.WeakSet[asyncio.Transport] = weakref.WeakSet()  # connections served, for `done`
        self.spliced = 0  # connections handed to mitmproxy

    async def running(self) -> None:
        self._accepting = asyncio.ensure_future(self._accept())

    async def done(self) -> None:
        if self._accepting is not None:
            self._accepting.cancel()
        if self.upstream is not None:
            self.upstream.close()
        for task in list(self._handling):
            task.cancel()
        self._socket.close()
        for transport in list(self._open):  # at once: a TLS close would wait for a loop that is ending
            transport.abort()

    def serves(self, host: str, port: int, sni: str | None) -> bool:
        """Whether the requests for `host:port` are served here: every one when the door forwards what the chain
        sends upstream; else when the chain answers them all (nothing for it may go upstream)."""
        if self.upstream is not None:
            return True
        network = self.chain.network
        if network.everything:
            return False
        return isinstance(network.egress.check_unresolved(host, port, sni), Refused)

    def names_base_url(self, host: str, port: int) -> bool:
        """Whether `host:port` is llmproxy's own base URL, served here whatever the network lets out (a client
        with both a base URL and the proxy variables): its requests go where their route says."""
        return port == self.base_url_port and host in LOOPBACK_HOSTS

    def forward(self, incoming: Incoming) -> Forward | None:
        """How `incoming`, which the chain sends upstream, goes there from here (None: this door cannot send it):
        to the server its connection names, or where `--map` sends that host — the Host header then naming
        it, as mitmproxy names it when a request's host changes."""
        upstream = incoming.upstream
        if self.upstream is None or upstream is None:
            return None
        scheme, host, port, path = incoming.raw.scheme, upstream.host, upstream.port, incoming.raw.path
        host_header = None
        destination = self.mapped.get(host.lower())
        if destination is not None:
            scheme, host, port = destination.scheme, destination.host, destination.port
            path = destination.path_prefix + path
            named = f"[{host}]" if ":" in host else host
            host_header = named if DEFAULT_PORTS.get(scheme) == port else f"{named}:{port}"
        return Forward(self.chain, self.upstream, incoming, Server(scheme, host, port, host), path, host_header)

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                client, _ = await loop.sock_accept(self._socket)
            except OSError as error:  # out of file descriptors, say: the listener stays
                logger.warning("llmproxy: cannot accept a connection: %s", error.strerror or error)
                await asyncio.sleep(0.1)
                continue
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            task = asyncio.ensure_future(self._handle(client))
            self._handling.add(task)
            task.add_done_callback(self._handling.discard)

    async def _handle(self, client: socket.socket) -> None:
        served = False
        try:
            async with asyncio.timeout(_HANDSHAKE_TIMEOUT):
                served = await self._serve(client)
        except _TooLarge:
            served = await _refuse(client, 431, f"a request head of over {MAX_CONNECT_HEAD:,} bytes before TLS")
        except (_Closed, TimeoutError, OSError, ssl.SSLError) as error:
            logger.debug("llmproxy: a connection ended before it was served: %s", error)
            served = False
        except Exception:
            logger.exception("llmproxy: a connection could not be served")
        finally:  # the door stopping cancels what it was still reading
            if not served:
                client.close()

    async def _serve(self, client: socket.socket) -> bool:
        """Serve `client`, or hand it on; False when it is to be closed."""
        loop = asyncio.get_running_loop()
        line = await _peek(client, _line_end)
        parts = line[: line.index(b"\r\n")].split(b" ")
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
            return await _refuse(client, 400, "a malformed request line")
        method, target = parts[0], parts[1].decode("latin-1")
        if method == b"CONNECT":
            head = await _peek(client, _head_end)
            try:
                host, port = _authority(target)
            except ValueError:
                return await _refuse(client, 400, f"a malformed CONNECT target: {target[:200]!r}")
            client.recv(len(head))  # taken off the socket: the ClientHello that follows stays for TLS
            await loop.sock_sendall(client, _ESTABLISHED)
            try:
                hello = parse(await _peek(client, _hello_end))
            except NotTls:  # not TLS: mitmproxy knows what to do with it
                return await self._splice(client, head)
            assert hello is not None
            if not hello.speaks_http1 or not self.serves(host, port, hello.sni):
                return await self._splice(client, head)
            context = self.certificates.context(hello.sni or host)
            tunnel = _Tunnel(self, "https", host, port, hello.sni)
            transport, _ = await loop.connect_accepted_socket(lambda: HttpConnection(tunnel), client, ssl=context)
            self._open.add(transport)
            return True
        absolute = _absolute(target)
        if absolute is None or absolute[0] != "http":  # origin form or https: no request for a proxy
            return await self._splice(client, None)
        if not self.names_base_url(absolute[1], absolute[2]) and not self.serves(absolute[1], absolute[2], None):
            return await self._splice(client, None)
        tunnel = _Tunnel(self, "http", absolute[1], absolute[2], None)
        transport, _ = await loop.connect_accepted_socket(lambda: HttpConnection(tunnel), client)
        self._open.add(transport)
        return True

    async def mitmproxy_port(self) -> int:
        """mitmproxy's loopback port, once it has started (the first to ask starts it)."""
        if self._fallback_port is None:
            self._fallback_port = asyncio.get_running_loop().run_in_executor(None, self._fallback)
        return await asyncio.shield(self._fallback_port)

    async def _splice(self, client: socket.socket, connect: bytes | None) -> bool:
        """Hand `client` to mitmproxy: its CONNECT (`connect`, answered already) sent again and the answer
        swallowed, then everything piped both ways."""
        loop = asyncio.get_running_loop()
        port = await self.mitmproxy_port()
        upstream = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        upstream.setblocking(False)
        try:
            await loop.sock_connect(upstream, ("127.0.0.1", port))
            upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if connect is not None:
                await loop.sock_sendall(upstream, connect)
                answer = await _peek(upstream, _head_end)
                upstream.recv(len(answer))
                if not answer.startswith(b"HTTP/1.1 200"):
                    raise _Closed(f"mitmproxy answered the CONNECT {answer[:40]!r}")
            near, far = _Pipe(), _Pipe()
            near.peer, far.peer = far, near
            self._open.add((await loop.connect_accepted_socket(lambda: far, upstream))[0])
            self._open.add((await loop.connect_accepted_socket(lambda: near, client))[0])
        except BaseException:
            upstream.close()
            raise
        self.spliced += 1
        return True


class _Tunnel:
    """The requests of one client connection through the lean door, as the proxy door would see them: the
    server the connection goes to (`host`, `port`: the CONNECT's, or a plain request's URL), the client's SNI."""

    def __init__(self, door: LeanDoor, scheme: str, host: str, port: int, sni: str | None) -> None:
        self.door = door
        self.scheme = scheme
        self.host = host
        self.port = port
        self.sni = sni

    def answer_request(self, request: ParsedRequest) -> "Reply | Forward | _HandedOn":
        incoming = self._incoming(request)
        if self.door.upstream is not None and request.upgrade:  # recording a WebSocket: mitmproxy's recorder does
            return _HandedOn(self.door, incoming)
        chain = self.door.chain
        reply = chain.answer(incoming, self.door.context)
        if reply is None and (forward := self.door.forward(incoming)) is not None:
            return forward
        if reply is None:  # the network opened for it after the connection came here: it cannot go out from here
            chain.ended(incoming)
            return text_reply(
                502, "llmproxy: this connection cannot reach the upstream; open a new one\n", ReplySource.ERROR
            )
        return reply

    def websocket_for(self, request: ParsedRequest) -> tuple[RawRequest, WebSocketCodec] | None:
        incoming = self._incoming(request)
        if not self.door.chain.serves_websocket(incoming):
            return None
        raw = replace(incoming.raw, scheme="wss" if incoming.raw.scheme == "https" else "ws")
        codec = websocket_codec(detect(raw.host, raw.path, dict(raw.headers), method=raw.method))
        return (raw, codec) if codec is not None else None

    def answer_message(self, request: RawRequest) -> Reply:
        reply = self.door.chain.answer(Incoming(request, Door.WEBSOCKET), _WEBSOCKET)
        assert reply is not None  # a door that cannot forward always gets a reply
        return reply

    def _incoming(self, request: ParsedRequest) -> Incoming:
        scheme, host, port, path = self.scheme, self.host, self.port, request.target
        if (absolute := _absolute(path)) is not None:  # a plain request through the proxy
            scheme, host, port, path = absolute
        headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in request.raw_headers]
        if scheme == "http" and self.door.names_base_url(host, port):
            routed = _routed(request, path, headers)  # for llmproxy's own base URL: where that sends it
            if routed is not None:
                return routed
        return _incoming(request, scheme, host, port, path, headers, self.sni)


_WEBSOCKET: Final = Context(Door.WEBSOCKET, forwards=False)


class BaseUrlServer:
    """llmproxy's own base URL (`$LLMPROXY_BASE_URL`) in record and replay, served beside the lean door: a
    request goes where its route says (llmproxy.providers.origins), as `base_url.BaseUrl` sends it through
    mitmproxy."""

    def __init__(self, door: LeanDoor, port: int = 0) -> None:
        self.door = door
        self._socket = socket.create_server(("127.0.0.1", port), backlog=1024)
        self.port: int = self._socket.getsockname()[1]
        self._server: asyncio.Server | None = None

    async def running(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: HttpConnection(_BaseUrlRequests(self)), sock=self._socket)

    async def done(self) -> None:
        if self._server is not None:
            close_server(self._server)
        self._socket.close()


class _BaseUrlRequests(_Tunnel):
    def __init__(self, server: BaseUrlServer) -> None:
        super().__init__(server.door, "http", "127.0.0.1", server.port, None)

    def answer_request(self, request: ParsedRequest) -> "Reply | Forward | _HandedOn":
        headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in request.raw_headers]
        if _routed(request, request.target, headers) is not None:
            return super().answer_request(request)
        route = detect("127.0.0.1", request.target, request.headers, method=request.method)
        what = f"{route.provider.value} has no public host" if route else "this is no LLM API path llmproxy knows"
        return text_reply(
            404,
            f"llmproxy: {request.method} {request.target}: {what}; give its upstream a listener of its own with "
            "--reverse URL\n",
            ReplySource.MISS,
        )

    def _incoming(self, request: ParsedRequest) -> Incoming:
        headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in request.raw_headers]
        routed = _routed(request, request.target, headers)
        return routed if routed is not None else super()._incoming(request)


def _incoming(
    request: ParsedRequest,
    scheme: str,
    host: str,
    port: int,
    path: str,
    headers: list[tuple[str, str]],
    sni: str | None,
) -> Incoming:
    """The request as the proxy door makes it of a mitmproxy flow (`flows.raw_request`): its host as the Host
    header names it (`pretty_host`), its body decoded; where it would go out, with the names the client gave."""
    host_header = next((value for name, value in headers if name.lower() == "host"), None)
    encoding = request.headers.get("content-encoding")
    body, undecodable = decode_body(request.body, encoding)
    raw = RawRequest(
        method=request.method,
        scheme=scheme,
        host=_pretty_host(host_header) if host_header else host,
        port=port,
        path=path,
        http_version=request.version,
        headers=tuple(headers),
        body=body,
        content_encoding=encoding,
        undecodable=undecodable,
    )
    return Incoming(raw, Door.PROXY, Upstream(host, port, (host_header, sni)))


def _routed(request: ParsedRequest, path: str, headers: list[tuple[str, str]]) -> Incoming | None:
    """A request to llmproxy's base URL as the proxy door sees it once `base_url.BaseUrl` has sent it to its
    origin: the origin's scheme, host and port, a Host header rewritten to name it (as mitmproxy does when a
    request's host changes). None: it has no origin."""
    route = detect("127.0.0.1", path, request.headers, method=request.method)
    origin = origin_for(route, path) if route is not None else None
    if origin is None:
        return None
    target = Destination.parse(origin)
    named = target.host if DEFAULT_PORTS.get(target.scheme) == target.port else f"{target.host}:{target.port}"
    headers = [(name, named) if name.lower() == "host" else (name, value) for name, value in headers]
    return _incoming(request, target.scheme, target.host, target.port, path, headers, None)


class _HandedOn:
    """A request the lean door does not send on itself — a WebSocket upgrade while recording: mitmproxy's
    recorder records the WebSocket — sent to mitmproxy as the client would have sent it through a proxy (in a
    tunnel of its own, over TLS with a certificate from the same CA, for an https server), the client's
    connection then piped to it both ways."""

    def __init__(self, door: LeanDoor, incoming: Incoming) -> None:
        self.door = door
        self.incoming = incoming
        self.far: _Pipe | None = None

    async def send(self, connection: HttpConnection, request: ParsedRequest) -> bool:
        transport = connection.transport
        assert transport is not None
        assert self.incoming.upstream is not None
        loop = asyncio.get_running_loop()
        raw, upstream = self.incoming.raw, self.incoming.upstream
        authority = f"[{upstream.host}]:{upstream.port}" if ":" in upstream.host else f"{upstream.host}:{upstream.port}"
        tls = raw.scheme == "https"
        target = raw.path if tls else f"http://{authority}{raw.path}"
        head = [f"{raw.method} {target} HTTP/1.1", *(f"{name}: {value}" for name, value in raw.headers)]
        sent = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + request.body + connection.rest
        port = await self.door.mitmproxy_port()
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setblocking(False)
        try:
            await loop.sock_connect(server, ("127.0.0.1", port))
            server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tls:
                await loop.sock_sendall(server, f"CONNECT {authority} HTTP/1.1\r\nhost: {authority}\r\n\r\n".encode())
                answer = await _peek(server, _head_end)
                server.recv(len(answer))
                if not answer.startswith(b"HTTP/1.1 200"):
                    raise _Closed(f"mitmproxy answered the CONNECT {answer[:40]!r}")
            near, far = _Pipe(), _Pipe()
            near.transport, near.peer, far.peer = transport, far, near
            trust = ssl.create_default_context(cafile=self.door.certificates.ca_cert) if tls else None
            sni = upstream.asserted[1] if len(upstream.asserted) > 1 else None
            self.far = far
            await loop.create_connection(
                lambda: far, sock=server, ssl=trust, server_hostname=(sni or upstream.host) if tls else None
            )
        except BaseException:
            server.close()
            raise
        assert far.transport is not None
        far.transport.write(sent)
        connection.socket = _Handed(far)
        self.door.spliced += 1
        return False

    def abandon(self) -> None:
        if self.far is not None and self.far.transport is not None:
            self.far.transport.close()

    def hold(self, held: bool) -> None:  # asked only while the request is handed on: nothing comes back yet
        pass


class _Handed:
    """A client's connection once handed on to mitmproxy: what the client sends goes there as it comes."""

    def __init__(self, far: "_Pipe") -> None:
        self.far = far

    def receive(self, data: bytes | None) -> None:
        transport = self.far.transport
        if transport is None:
            return
        if data is None:
            if transport.can_write_eof():
                transport.write_eof()
        else:
            transport.write(data)

    def close(self) -> None:
        if self.far.transport is not None:
            self.far.transport.close()


class _Pipe(asyncio.Protocol):
    """One side of a spliced connection: what it reads goes to its peer's side, as it comes; an end (a
    half-close) is passed on as one."""

    def __init__(self) -> None:
        self.peer: _Pipe | None = None
        self.transport: asyncio.Transport | None = None
        self.ended = False  # this side said it sends no more
        self._early: list[bytes] = []  # read before the peer's side was connected

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if self._early:
            transport.write(b"".join(self._early))
            self._early.clear()

    def data_received(self, data: bytes) -> None:
        peer = self.peer
        if peer is None or peer.transport is None:
            if peer is not None:
                peer._early.append(data)
            return
        peer.transport.write(data)

    def eof_received(self) -> bool:
        self.ended = True
        peer = self.peer
        if peer is None or peer.transport is None or peer.ended or not peer.transport.can_write_eof():
            return False  # both sides done (or the end cannot be passed on): both closed
        with contextlib.suppress(OSError, RuntimeError):
            peer.transport.write_eof()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        peer = self.peer
        if peer is not None and peer.transport is not None:
            peer.transport.close()

    def pause_writing(self) -> None:  # the peer's writes pile up: stop reading what it would write
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()


async def _peek(sock: socket.socket, enough: Callable[[bytes], int | None]) -> bytes:
    """The bytes waiting on `sock`, left there, once `enough` says how many of them make what is awaited."""
    loop = asyncio.get_running_loop()
    seen = -1
    while True:
        await _readable(loop, sock)
        try:
            data = sock.recv(MAX_CONNECT_HEAD, socket.MSG_PEEK)
        except BlockingIOError:
            continue
        if not data:
            raise _Closed("closed by the client")
        size = enough(data)
        if size is not None:
            return data[:size]
        if len(data) >= MAX_CONNECT_HEAD:
            raise _TooLarge
        if len(data) == seen:  # nothing new since the last look: the rest is on its way
            await asyncio.sleep(_POLL)
        seen = len(data)


class _TooLarge(_Closed):
    pass


async def _readable(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(sock.fileno(), readable)
    try:
        await ready
    finally:
        loop.remove_reader(sock.fileno())


def _line_end(data: bytes) -> int | None:
    end = data.find(b"\r\n")
    return None if end < 0 else end + 2


def _head_end(data: bytes) -> int | None:
    end = data.find(b"\r\n\r\n")
    return None if end < 0 else end + 4


def _hello_end(data: bytes) -> int | None:
    """All of `data` once it holds a whole ClientHello (NotTls raised through when it cannot be one)."""
    if len(data) > MAX_HELLO:
        raise NotTls("no ClientHello within 64 KB")
    return len(data) if parse(data) is not None else None


async def _refuse(client: socket.socket, status: int, why: str) -> bool:
    message = f"llmproxy: {why}\n".encode()
    head = b"HTTP/1.1 %d %s\r\nconnection: close\r\ncontent-length: %d\r\n\r\n" % (
        status,
        reason_phrase(status).encode(),
        len(message),
    )
    with contextlib.suppress(OSError):
        await asyncio.get_running_loop().sock_sendall(client, head + message)
    return False


def _authority(target: str) -> tuple[str, int]:
    """`host:port` of a CONNECT (`[v6]:port` for an IPv6 address). Raises ValueError."""
    host, colon, port = target.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(target)
    if host.startswith("["):
        if not host.endswith("]"):
            raise ValueError(target)
        host = host[1:-1]
    return host, int(port)


def _absolute(target: str) -> tuple[str, str, int, str] | None:
    """Scheme, host, port and path of a request target in absolute form (`http://host:port/path`); None for
    any other form."""
    if not target.startswith(("http://", "https://")):
        return None
    parts = urlsplit(target)
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError:
        return None
    if not parts.hostname:
        return None
    path = target[len(parts.scheme) + 3 + len(parts.netloc) :] or "/"
    return parts.scheme, parts.hostname, port, path


def _pretty_host(authority: str) -> str:
    """The host a Host header names, as mitmproxy's `pretty_host` reads it: the port dropped, an IPv6 address's
    brackets too."""
    if authority.startswith("["):
        end = authority.find("]")
        return authority[1:end] if end > 0 else authority
    return authority.rpartition(":")[0] if ":" in authority else authority
