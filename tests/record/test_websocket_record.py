"""Recording the Responses API over WebSocket: the official openai SDK (`client.responses.connect()`) talks to
api.openai.com through the proxy (TLS intercepted), a scripted upstream answers under that name, and each
`response.create` lands in the cassette as an exchange with the messages that answered it, redacted. What
cannot be recorded is named at the end."""

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.sync.client import connect
from websockets.sync.server import ServerConnection, serve

import tests.mitm  # noqa: F401  (the proxy runs in-process)
from llmproxy.cassette.model import JsonBody, MessageEvent
from llmproxy.cassette.store import load_cassette
from llmproxy.session import Listening, recording
from tests.certs import make_test_ca
from tests.e2e.clis import ScriptedServer, tool_loop
from tests.openai_websocket import KEY, answer, through_proxy


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[tuple[ScriptedServer, Path]]:
    ca = make_test_ca(tmp_path, ("api.openai.com",))
    server = ScriptedServer(tool_loop("exec_command", {"cmd": "echo hi"}), tls=ca.server_context)
    yield server, ca.cert_path
    server.close()


def test_each_request_on_a_websocket_is_an_exchange(tmp_path: Path, upstream: tuple[ScriptedServer, Path]) -> None:
    server, upstream_ca = upstream
    cassette = tmp_path / "c.json"
    listening = Listening({"api.openai.com": server.url}, upstream_ca, ca_directory=tmp_path / "ca")
    with recording(cassette, listening) as proxy:
        assert proxy.ca_cert is not None
        with through_proxy(proxy.url, proxy.ca_cert) as socket:
            first = answer(socket, model="gpt-6", input="run it", stream=True)
            called = first[-1].response
            output = [{"type": "function_call_output", "call_id": "call_capture_1", "output": "hi"}]
            second = answer(socket, model="gpt-6", input=output, previous_response_id=called.id, stream=True)
    assert [item.type for item in called.output] == ["message", "function_call"]
    assert second[-1].response.output_text == "The command printed llmproxy-ok."
    assert "1 over WebSocket" not in proxy.summary
    assert "2 over WebSocket" in proxy.summary
    assert "not recorded" not in proxy.summary

    text = cassette.read_text()
    assert KEY not in text
    one, two = load_cassette(cassette).exchanges
    assert one.websocket is not None
    assert two.websocket is not None
    assert one.websocket.connection == two.websocket.connection == one.id
    assert (one.provider, one.operation, one.model, one.streaming) == ("openai", "responses", "gpt-6", True)
    assert one.request.method == "GET"
    assert one.request.url == "wss://api.openai.com/v1/responses"
    assert any(line.lower().startswith("authorization: bearer <redacted:") for line in one.request.headers)
    assert isinstance(two.request.body, JsonBody)
    assert two.request.body.json_["previous_response_id"] == called.id  # as it was sent
    assert one.response is not None
    assert one.response.status == 101
    events = one.response.events or []
    assert [e.message["type"] for e in events if isinstance(e, MessageEvent)] == [e.type for e in first]
    assert [e.t_ms for e in events] == sorted(e.t_ms for e in events)
    assert one.timings.ttfb_ms is not None


def test_a_websocket_it_cannot_read_is_passed_through_and_named(tmp_path: Path) -> None:
    def echo(connection: ServerConnection) -> None:
        for message in connection:
            connection.send(f"echo {message!s}")

    with serve(echo, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.socket.getsockname()[1]
        cassette = tmp_path / "c.json"
        with (
            recording(cassette, Listening(ca_directory=tmp_path / "ca"), record_all=True) as proxy,
            connect(f"ws://127.0.0.1:{port}/socket", proxy=proxy.url) as client,
        ):
            client.send("hello")
            assert client.recv(timeout=10) == "echo hello"
        server.shutdown()
    assert f"not recorded: a WebSocket llmproxy cannot read message by message, to ws://127.0.0.1:{port}/socket" in (
        proxy.summary
    )
