"""The lean door: `llmproxy mock` and strict `llmproxy replay` serve clients through `HTTPS_PROXY` themselves,
without mitmproxy — the official SDKs answered, bad input answered or closed while the door serves on, nothing
resolved or connected out, and what may go upstream (`--allow-host`) handed to mitmproxy unnoticed.
Byte-identical answers on every door: tests/chain/test_both_doors.py."""

import asyncio
import json
import resource
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from llmproxy.session import Listening, Session, mocking, replaying
from tests.cassette import factory
from tests.certs import UpstreamCA, make_test_ca
from tests.conformance.server import LoopbackServer, Reply
from tests.mock.sdk_clients import anthropic_client, trusting

ROOT = Path(__file__).resolve().parents[2]
ASKED = {"model": "claude-haiku-4-5", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-haiku-4-5",
    "content": [{"type": "text", "text": "replayed"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 1},
}
REQUEST = (
    b"POST /v1/messages HTTP/1.1\r\nhost: api.anthropic.com\r\nanthropic-version: 2023-06-01\r\n"
    b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
) % (len(json.dumps(ASKED)), json.dumps(ASKED).encode())


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    directory = tmp_path_factory.mktemp("lean")
    path = directory / "expectations.json"
    paced = {"match": {"latestMessageContains": "slowly"}, "respond": {"text": "paced", "physics": {"ttftMs": 30}}}
    path.write_text(json.dumps({"expectations": [paced, {"respond": {"text": "lean"}}]}))
    with mocking(path, Listening(ca_directory=directory / "ca")) as session:
        assert [listener.spec for listener in session.listeners] == ["lean"]
        yield session


def port(session: Session) -> int:
    return int(session.url.rsplit(":", 1)[1])


def read_all(connection: socket.socket | ssl.SSLSocket) -> bytes:
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except (OSError, ssl.SSLError):
        pass
    return received


def tunnel(session: Session, target: str = "api.anthropic.com:443") -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", port(session)), timeout=10)
    connection.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += connection.recv(1)
    assert head == b"HTTP/1.1 200 Connection established\r\n\r\n"
    return connection


def tls(session: Session, name: str = "api.anthropic.com", alpn: list[str] | None = None) -> ssl.SSLSocket:
    context = trusting(session)
    if alpn is not None:
        context.set_alpn_protocols(alpn)
    return context.wrap_socket(tunnel(session, f"{name}:443"), server_hostname=name)


def assert_serving(session: Session) -> None:
    with anthropic_client(session) as client:
        message = client.messages.create(**ASKED)
    assert message.content[0].text == "lean"


def test_an_sdk_is_answered_streamed_and_not(mock: Session) -> None:
    with anthropic_client(mock) as client:
        assert client.messages.create(**ASKED).content[0].text == "lean"
        with client.messages.stream(**{**ASKED, "messages": [{"role": "user", "content": "slowly"}]}) as stream:
            assert "".join(stream.text_stream) == "paced"


@pytest.mark.parametrize(
    "sent",
    [b"CONNECT nowhere HTTP/1.1\r\n\r\n", b"CONNECT host:99999 HTTP/1.1\r\n\r\n", b"NONSENSE\r\n\r\n"],
    ids=["no-port", "bad-port", "no-request-line"],
)
def test_a_malformed_connect_gets_a_400_and_the_door_serves_on(mock: Session, sent: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port(mock)), timeout=10) as connection:
        connection.sendall(sent)
        answer = read_all(connection)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n"), answer
    assert b"llmproxy: a malformed" in answer
    assert_serving(mock)


def test_a_malformed_request_in_the_tunnel_gets_a_400(mock: Session) -> None:
    with tls(mock) as connection:
        connection.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: api.anthropic.com\r\ncontent-length: many\r\n\r\n")
        answer = read_all(connection)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n"), answer
    assert b"llmproxy: malformed request" in answer
    assert_serving(mock)


def test_256_kb_of_headers_get_a_431_in_the_tunnel_and_before_it(mock: Session) -> None:
    padding = b"x-padding: " + b"a" * (256 * 1024) + b"\r\n"
    with tls(mock) as connection:
        connection.sendall(REQUEST.replace(b"\r\n\r\n", b"\r\n" + padding + b"\r\n", 1))
        inside = read_all(connection)
    with socket.create_connection(("127.0.0.1", port(mock)), timeout=10) as connection:
        connection.sendall(b"CONNECT api.anthropic.com:443 HTTP/1.1\r\n" + padding)
        before = read_all(connection)
    assert inside.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), inside[:100]
    assert before.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), before[:100]
    assert_serving(mock)


def test_a_slow_client_is_served_byte_by_byte(mock: Session) -> None:
    with socket.create_connection(("127.0.0.1", port(mock)), timeout=10) as raw:
        for byte in b"CONNECT api.anthropic.com:443 HTTP/1.1\r\n\r\n":
            raw.sendall(bytes([byte]))
            time.sleep(0.001)
        head = b""
        while b"\r\n\r\n" not in head:
            head += raw.recv(1)
        with trusting(mock).wrap_socket(raw, server_hostname="api.anthropic.com") as connection:
            for start in range(0, len(REQUEST), 7):
                connection.sendall(REQUEST[start : start + 7])
            connection.sendall(b"")
            answer = connection.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n"), answer
    assert b'"text":"lean"' in answer


def test_a_half_closed_connection_still_gets_its_paced_answer(mock: Session) -> None:
    body = json.dumps({**ASKED, "stream": True, "messages": [{"role": "user", "content": "slowly"}]}).encode()
    request = (
        b"POST http://api.anthropic.com/v1/messages HTTP/1.1\r\nhost: api.anthropic.com\r\n"
        b"anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
    ) % (len(body), body)
    with socket.create_connection(("127.0.0.1", port(mock)), timeout=10) as connection:
        connection.sendall(request)
        connection.shutdown(socket.SHUT_WR)
        answer = read_all(connection)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n"), answer[:200]
    assert b"transfer-encoding: chunked" in answer
    assert answer.endswith(b"0\r\n\r\n")
    assert b"message_stop" in answer


THRONG = 1000


async def _one_of_many(door: int, request: bytes) -> str:
    """One client among many: "answered" (a 200 with the mock's text), "closed" (the door closed the connection
    without an answer), or what else it got."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", door)
    except OSError as error:
        return f"not connected: {error}"
    try:
        writer.write(request)
        answer = await reader.read()  # `connection: close`: the whole answer, then the end
    except OSError as error:
        return f"failed: {error}"
    finally:
        writer.close()
    if not answer:
        return "closed"
    return "answered" if answer.startswith(b"HTTP/1.1 200 OK\r\n") and b'"text":"lean"' in answer else repr(answer[:80])


async def _throng(door: int, request: bytes) -> list[str]:
    async with asyncio.timeout(120):
        return await asyncio.gather(*(_one_of_many(door, request) for _ in range(THRONG)))


def test_a_thousand_connections_at_once_each_get_an_answer_and_the_door_serves_on(mock: Session) -> None:
    """1,000 clients connect at once, each sending its request through the proxy (plain HTTP in absolute form:
    a TLS handshake each would only slow the test) and waiting for its answer on a connection of its own."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 3 * THRONG  # the clients' sockets and the door's, in this one process, and room to spare
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    body = json.dumps(ASKED).encode()
    request = (
        b"POST http://api.anthropic.com/v1/messages HTTP/1.1\r\nhost: api.anthropic.com\r\nconnection: close\r\n"
        b"anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
    ) % (len(body), body)
    try:
        outcomes = asyncio.run(_throng(port(mock), request), debug=False)  # debug mode would slow it tenfold
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    tally = Counter(outcomes)
    assert set(tally) <= {"answered", "closed"}, tally
    assert tally["answered"] >= THRONG // 2, tally  # closing is for a door out of descriptors, not its habit
    assert_serving(mock)


def test_a_client_that_does_not_trust_the_ca_fails_its_handshake_and_the_door_serves_on(mock: Session) -> None:
    untrusting = ssl.create_default_context()  # the system's roots only
    with pytest.raises(ssl.SSLCertVerificationError):
        untrusting.wrap_socket(tunnel(mock), server_hostname="api.anthropic.com")
    assert_serving(mock)


def test_a_client_offering_only_http2_is_handed_to_mitmproxy(mock: Session) -> None:
    with tls(mock, alpn=["h2"]) as connection:
        assert connection.selected_alpn_protocol() == "h2"  # mitmproxy speaks it; the lean door does not
    with tls(mock, alpn=["h2", "http/1.1"]) as connection:
        assert connection.selected_alpn_protocol() == "http/1.1"  # served here
    assert_serving(mock)


# strict replay, with one local HTTPS upstream let out


@pytest.fixture(scope="module")
def upstream_ca(tmp_path_factory: pytest.TempPathFactory) -> UpstreamCA:
    return make_test_ca(tmp_path_factory.mktemp("upstream"), ("upstream.test",))  # and 127.0.0.1


@pytest.fixture(scope="module")
def local_upstream(upstream_ca: UpstreamCA) -> Iterator[LoopbackServer]:
    with LoopbackServer(tls=upstream_ca.server_context) as server:
        yield server


@pytest.fixture(scope="module")
def replay(
    tmp_path_factory: pytest.TempPathFactory, upstream_ca: UpstreamCA, local_upstream: LoopbackServer
) -> Iterator[Session]:
    directory = tmp_path_factory.mktemp("lean-replay")
    cassette = directory / "cassette.json"
    writer = CassetteWriter.open(cassette, Redactor())
    answer = factory.response(json.dumps(MESSAGE).encode())
    writer.add(factory.exchange(factory.request(ASKED), answer, started_at=datetime.now(UTC)))
    writer.close()
    listening = Listening(ca_directory=directory / "ca", upstream_ca=upstream_ca.cert_path)
    allowed = [f"127.0.0.1:{local_upstream.port}"]
    with replaying(cassette, listening=listening, timing=None, allow_hosts=allowed) as session:
        assert [listener.spec for listener in session.listeners] == ["lean"]
        yield session


def test_strict_replay_resolves_no_name_and_connects_nowhere(replay: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    resolved: list[str] = []
    connected: list[object] = []
    resolve, connect = socket.getaddrinfo, socket.socket.connect

    def watched_resolve(host: object, *rest: object, **named: object) -> object:
        resolved.append(str(host))
        return resolve(host, *rest, **named)  # type: ignore[arg-type]

    def watched_connect(self: socket.socket, address: object) -> object:
        connected.append(address)
        return connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", watched_resolve)
    monkeypatch.setattr(socket.socket, "connect", watched_connect)
    started = {thread.ident for thread in threading.enumerate() if thread.name == "llmproxy-proxy"}
    with anthropic_client(replay) as client:
        assert client.messages.create(**ASKED).content[0].text == "replayed"
        import anthropic

        with pytest.raises(anthropic.BadRequestError, match="no recorded exchange matches"):
            client.messages.create(**{**ASKED, "messages": [{"role": "user", "content": "missed"}]})
    assert "api.anthropic.com" not in resolved
    assert {address for address in connected if address != ("127.0.0.1", port(replay))} == set()
    assert {thread.ident for thread in threading.enumerate() if thread.name == "llmproxy-proxy"} == started


def test_a_host_let_out_is_handed_to_mitmproxy_and_reached(replay: Session, local_upstream: LoopbackServer) -> None:
    local_upstream.queue(Reply(200, {"content-type": "text/plain"}, b"reached"))
    name = "127.0.0.1"
    with trusting(replay).wrap_socket(
        tunnel(replay, f"{name}:{local_upstream.port}"), server_hostname=name
    ) as connection:
        connection.sendall(
            f"GET /there HTTP/1.1\r\nhost: {name}:{local_upstream.port}\r\nconnection: close\r\n\r\n".encode()
        )
        answer = read_all(connection)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert answer.endswith(b"reached")
    assert [received.path for received in local_upstream.received] == ["/there"]


CHILD = """
import json, sys
from pathlib import Path
import httpx
from llmproxy.session import Listening, mocking, replaying
directory = Path(sys.argv[1])
with replaying(directory / "empty.json", listening=Listening(ca_directory=directory / "ca")) as proxy:
    with httpx.Client(proxy=proxy.url, verify=proxy.environment["SSL_CERT_FILE"]) as client:
        replayed = client.post("https://api.openai.com/v1/chat/completions", json={"model": "m", "messages": []})
with mocking(directory / "expectations.json", Listening(ca_directory=directory / "ca")) as proxy:
    with httpx.Client(proxy=proxy.url, verify=proxy.environment["SSL_CERT_FILE"]) as client:
        mocked = client.post("https://api.openai.com/v1/chat/completions", json={"model": "m", "messages": []})
print(json.dumps([replayed.status_code, mocked.status_code, "mitmproxy" in sys.modules]))
"""


def test_replay_and_mock_never_import_mitmproxy(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_text(json.dumps({"llmproxy_cassette": 1, "exchanges": []}))
    (tmp_path / "expectations.json").write_text(json.dumps({"expectations": [{"respond": {"text": "hi"}}]}))
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [400, 200, False]  # a miss, an answer; mitmproxy never imported
