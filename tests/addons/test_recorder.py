"""The recorder inside a running proxy: streams pass through unbuffered, concurrent streams are recorded
whole, bad upstream bodies reach the client unchanged and are kept verbatim, other traffic is left alone."""

import gzip
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2 as httpx
import pytest
from websockets.sync.client import connect
from websockets.sync.server import ServerConnection, serve

from llmproxy.ca import ensure_ca
from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.model import Exchange, JsonBody
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.chain import Chain
from llmproxy.chain.taps.record import RecordTap
from llmproxy.framing.sse import encode_event
from llmproxy.record_scope import RecordScope
from llmproxy_addons.door import ProxyDoor
from llmproxy_addons.proxy import ProxySettings, ProxyThread
from tests.conformance.server import LoopbackServer, Reply

SSE = {"content-type": "text/event-stream"}


def sse_events(count: int) -> list[bytes]:
    return [encode_event(f'{{"n":{i}}}', event="delta") for i in range(count)]


def response_bytes(exchange: Exchange) -> bytes:
    """What the client received, rebuilt from the cassette."""
    response = exchange.response
    assert response is not None
    if response.events is not None:
        return b"".join(event_bytes(event) for event in response.events)
    return body_bytes(response.body) if response.body is not None else b""


def request_json(exchange: Exchange) -> dict[str, object]:
    body = exchange.request.body
    assert isinstance(body, JsonBody)
    return dict(body.json_)


class Recording:
    """A proxy with a recorder on a fresh cassette; `exchanges()` stops it and loads what was written."""

    def __init__(self, tmp: Path, scope: RecordScope) -> None:
        self.path = tmp / "c.json"
        self.writer = CassetteWriter.open(self.path, Redactor())
        self.writer.start()
        ca = ensure_ca(tmp / "ca")
        self.proxy = ProxyThread(
            ProxySettings(confdir=ca.directory), [ProxyDoor(Chain(taps=[RecordTap(scope, self.writer)]))]
        ).start()
        self.http = httpx.Client(proxy=self.proxy.url, timeout=30)

    def exchanges(self) -> list[Exchange]:
        self.http.close()
        self.proxy.stop()
        self.writer.close()
        return list(load_cassette(self.path).exchanges)


@pytest.fixture
def recording(tmp_path: Path) -> Iterator[Recording]:
    recording = Recording(tmp_path, RecordScope.of(["recorded.test"]))
    yield recording
    recording.http.close()
    recording.proxy.stop()


def test_a_stream_reaches_the_client_before_the_upstream_has_finished(
    recording: Recording, loopback: LoopbackServer
) -> None:
    order: list[str] = []
    release = threading.Event()
    loopback.queue(Reply(200, SSE, events=sse_events(5), hold_last=release))
    with recording.http.stream("POST", f"{loopback.url}/v1/messages", json={"stream": True}) as response:
        chunks = response.iter_bytes()
        assert next(chunks).startswith(b"event: delta")
        order.append("client has the first event")
        release.set()
        body = b"".join(chunks)
    assert order == ["client has the first event"]
    assert body.endswith(sse_events(5)[-1])
    (exchange,) = recording.exchanges()
    assert exchange.streaming
    assert exchange.response is not None
    assert exchange.response.events is not None
    assert len(exchange.response.events) == 5


def test_fifty_concurrent_streams_are_recorded_whole(recording: Recording, loopback: LoopbackServer) -> None:
    loopback.queue(*(Reply(200, SSE, events=sse_events(20)) for _ in range(50)))

    def call(i: int) -> tuple[int, int]:
        with recording.http.stream("POST", f"{loopback.url}/v1/messages", json={"stream": True, "i": i}) as r:
            return r.status_code, sum(chunk.count(b"event: delta") for chunk in r.iter_bytes())

    with ThreadPoolExecutor(50) as pool:
        assert list(pool.map(call, range(50))) == [(200, 20)] * 50
    exchanges = recording.exchanges()
    assert len(exchanges) == 50
    assert [len(response_bytes(exchange).split(b"\n\n")) - 1 for exchange in exchanges] == [20] * 50
    assert all(exchange.response and exchange.response.events for exchange in exchanges)
    assert sorted(request_json(exchange)["i"] for exchange in exchanges) == list(range(50))  # type: ignore[type-var]


@pytest.mark.parametrize(
    "reply",
    [
        Reply(200, {"content-type": "application/json"}, b'{"id": "msg_1", "content": [tru'),
        Reply(200, {"content-type": "text/html"}, b"<html>gateway says hi</html>"),
        Reply(200, SSE, events=[*sse_events(2), b"event: delta\ndata: {cut"]),
    ],
    ids=["invalid-json", "not-an-llm-body", "cut-stream"],
)
def test_bad_upstream_bodies_pass_unchanged_and_are_kept_verbatim(
    recording: Recording, loopback: LoopbackServer, reply: Reply
) -> None:
    loopback.queue(reply)
    response = recording.http.post(f"{loopback.url}/v1/messages", json={"stream": reply.events is not None})
    sent = reply.body if reply.events is None else b"".join(reply.events)
    assert response.content == sent
    (exchange,) = recording.exchanges()
    assert response_bytes(exchange) == sent
    assert exchange.notes  # what was odd about it is noted


def test_a_gzip_stream_is_stored_decoded_with_its_encoding_noted(
    recording: Recording, loopback: LoopbackServer
) -> None:
    compressor = gzip.compress(b"".join(sse_events(3)))
    headers = SSE | {"content-encoding": "gzip"}
    loopback.queue(Reply(200, headers, events=[compressor[:10], compressor[10:]]))
    response = recording.http.post(f"{loopback.url}/v1/messages", json={"stream": True})
    assert response.content == b"".join(sse_events(3))  # httpx decodes what passed through still encoded
    (exchange,) = recording.exchanges()
    assert exchange.response is not None
    assert exchange.response.content_encoding == "gzip"
    assert response_bytes(exchange) == b"".join(sse_events(3))


def test_other_traffic_passes_through_unrecorded_unless_its_host_is_named(
    recording: Recording, loopback: LoopbackServer
) -> None:
    loopback.queue(Reply(200, {"content-type": "text/plain"}, b"hello"), Reply(200, {}, b"named"))
    assert recording.http.get(f"{loopback.url}/index.html").text == "hello"
    named = recording.http.get(
        f"{loopback.url}/anything", headers={"host": "recorded.test"}, extensions={}
    )  # --record-host recorded.test
    assert named.text == "named"
    exchanges = recording.exchanges()
    assert [exchange.request.url for exchange in exchanges] == [
        f"http://recorded.test:{loopback.url.rsplit(':', 1)[1]}/anything"
    ]


def test_websocket_upgrades_pass_through_unrecorded(tmp_path: Path) -> None:
    def echo(connection: ServerConnection) -> None:
        for message in connection:
            connection.send(f"echo {message!s}")

    with serve(echo, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        recording = Recording(tmp_path, RecordScope.of(everything=True))
        port = server.socket.getsockname()[1]
        with connect(f"ws://127.0.0.1:{port}/socket", proxy=recording.proxy.url) as client:
            client.send("hello")
            assert client.recv(timeout=10) == "echo hello"
        assert recording.exchanges() == []
        server.shutdown()
