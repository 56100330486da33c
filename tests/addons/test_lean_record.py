"""Recording through the lean door: what the chain sends upstream goes out without mitmproxy — kept-alive
connections, TLS verified as mitmproxy verifies it, the answer passed on as it comes, its content-encoding as
the server sent it — and the cassette written is the one mitmproxy's door writes, timings aside."""

import gzip
import hashlib
import json
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from llmproxy.session import Listening, Session, recording
from tests.addons.test_lean_door import ASKED, MESSAGE  # the same call and answer as the lean door's tests
from tests.certs import UpstreamCA, make_test_ca
from tests.conformance.server import LoopbackServer, Reply

ROOT = Path(__file__).resolve().parents[2]
HOST = "api.anthropic.com"
STREAM = [
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_2","type":"message","role":'
    b'"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":'
    b'{"input_tokens":3,"output_tokens":1}}}\n\n',
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text",'
    b'"text":""}}\n\n',
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta",'
    b'"text":"piece by piece"}}\n\n',
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
    b'"usage":{"output_tokens":3}}\n\n',
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
]


@pytest.fixture(scope="module")
def upstream_ca(tmp_path_factory: pytest.TempPathFactory) -> UpstreamCA:
    return make_test_ca(tmp_path_factory.mktemp("upstream"), (HOST,))  # and 127.0.0.1


@pytest.fixture
def upstream(upstream_ca: UpstreamCA) -> Iterator[LoopbackServer]:
    with LoopbackServer(tls=upstream_ca.server_context) as server:
        yield server


def listening(tmp_path: Path, upstream: LoopbackServer, upstream_ca: UpstreamCA | None) -> Listening:
    trusted = upstream_ca.cert_path if upstream_ca is not None else None
    return Listening({HOST: upstream.url}, trusted, ca_directory=tmp_path / "ca")


def replies() -> list[Reply]:
    json_answer = Reply(200, {"content-type": "application/json"}, json.dumps(MESSAGE).encode())
    zipped = gzip.compress(json.dumps(MESSAGE).encode(), mtime=0)
    gzipped = Reply(200, {"content-type": "application/json", "content-encoding": "gzip"}, zipped)
    return [json_answer, gzipped, Reply(200, {"content-type": "text/event-stream"}, events=STREAM)]


def client(session: Session) -> httpx.Client:
    trust = ssl.create_default_context(cafile=session.environment["SSL_CERT_FILE"])
    return httpx.Client(proxy=session.url, verify=trust, timeout=30)


def ask(http: httpx.Client, stream: bool = False, encoding: str | None = None) -> httpx.Response:
    headers = {"anthropic-version": "2023-06-01", "x-api-key": "sk-ant-test"}
    if encoding is not None:
        headers["accept-encoding"] = encoding
    return http.post(f"https://{HOST}/v1/messages", json={**ASKED, "stream": stream}, headers=headers)


def record_three(session: Session) -> list[httpx.Response]:
    with client(session) as http:
        return [ask(http), ask(http, encoding="gzip"), ask(http, stream=True)]


def test_a_recording_is_served_by_the_lean_door_on_kept_connections(
    tmp_path: Path, upstream: LoopbackServer, upstream_ca: UpstreamCA
) -> None:
    upstream.queue(*replies())
    cassette = tmp_path / "c.json"
    with recording(cassette, listening(tmp_path, upstream, upstream_ca)) as session:
        assert [listener.spec for listener in session.listeners] == ["lean"]
        plain, zipped, streamed = record_three(session)
    assert plain.json() == MESSAGE
    assert zipped.headers["content-encoding"] == "gzip"  # passed on as the server sent it
    assert zipped.json() == MESSAGE
    assert b"piece by piece" in streamed.content
    assert upstream.connections == 1  # one client connection, one upstream connection kept alive
    assert [received.headers["host"] for received in upstream.received] == [f"127.0.0.1:{upstream.port}"] * 3
    recorded = json.loads(cassette.read_text())["exchanges"]
    assert [exchange["streaming"] for exchange in recorded] == [False, False, True]
    assert recorded[1]["response"]["body"]["json"] == MESSAGE  # decoded in the cassette


def without_timings(value: Any) -> Any:
    """A cassette with what differs between two runs taken out: timings, stream offsets, the server's Date."""
    if isinstance(value, dict):
        return {key: without_timings(item) for key, item in value.items() if key not in ("timings", "t_ms")}
    if isinstance(value, list):
        return [without_timings(item) for item in value if not str(item).startswith("Date: ")]
    return value


def test_the_cassette_is_the_one_mitmproxy_writes(
    tmp_path: Path, upstream: LoopbackServer, upstream_ca: UpstreamCA
) -> None:
    written = []
    for door, lean in (("lean", True), ("mitmproxy", False)):
        upstream.queue(*replies())
        cassette = tmp_path / f"{door}.json"
        chosen = replace(listening(tmp_path, upstream, upstream_ca), lean_door=lean)
        with recording(cassette, chosen) as session:
            assert (session.listeners[0].spec == "lean") is lean
            record_three(session)
        normal = json.dumps(without_timings(json.loads(cassette.read_text())), sort_keys=True)
        written.append(hashlib.sha256(normal.encode()).hexdigest())
    assert written[0] == written[1]


def test_an_upstream_not_trusted_is_a_502_and_not_recorded(tmp_path: Path, upstream: LoopbackServer) -> None:
    cassette = tmp_path / "c.json"
    with recording(cassette, listening(tmp_path, upstream, None)) as session, client(session) as http:
        response = ask(http)
    assert response.status_code == 502
    assert "certificate verify failed" in response.text.lower()
    assert upstream.received == []
    assert "not recorded: 1 request the upstream never answered" in session.summary


def test_an_answer_cut_midway_drops_the_client(
    tmp_path: Path, upstream: LoopbackServer, upstream_ca: UpstreamCA
) -> None:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n"
    upstream.queue(Reply(takeover=lambda connection: connection.sendall(head + b'{"partial":')))
    chosen = listening(tmp_path, upstream, upstream_ca)
    with (
        recording(tmp_path / "c.json", chosen) as session,
        client(session) as http,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        ask(http)
    assert "the answer broke off: the upstream closed the connection" in session.summary


CHILD = """
import json, sys
import httpx
from pathlib import Path
from llmproxy.session import Listening, recording
url = sys.argv[2]
with recording(sys.argv[1] + "/c.json", Listening(ca_directory=Path(sys.argv[1]) / "ca")) as proxy:
    with httpx.Client(proxy=proxy.url) as client:
        answered = client.post(url + "/v1/messages", json={"model": "m", "max_tokens": 1, "messages": []})
print(json.dumps([answered.status_code, "mitmproxy" in sys.modules]))
"""


def test_recording_never_imports_mitmproxy(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        server.queue(Reply(200, {"content-type": "application/json"}, json.dumps(MESSAGE).encode()))
        run = subprocess.run(
            [sys.executable, "-c", CHILD, str(tmp_path), server.url],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            check=False,
        )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [200, False]


def test_a_dead_upstream_is_a_502(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    with (
        recording(tmp_path / "c.json", Listening(ca_directory=tmp_path / "ca")) as session,
        httpx.Client(proxy=session.url, timeout=30) as http,
    ):
        response = http.post(f"http://127.0.0.1:{dead}/v1/messages", json=ASKED)
    assert response.status_code == 502
    assert "connection refused" in session.summary
