"""Replaying the Responses API over WebSocket, strictly and offline: a session recorded from a scripted upstream
with the official openai SDK is served again with the upstream gone — each request matched read whole, its
messages at their recorded offsets (or at once with `--timing instant`), a changed request refused with the
closest recording and the path that differs."""

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.model.exchange import RawEvent, RawExchange, RawResponse
from llmproxy.session import Listening, RecordMode, recording, replaying
from tests.cassette import factory
from tests.certs import make_test_ca
from tests.e2e.clis import ScriptedServer, tool_loop
from tests.openai_websocket import answer, through_proxy

INTERVAL_MS = 60
TOLERANCE_MS = 40  # as tests/replay/test_timing.py measured for the HTTP relay; a WebSocket adds no hop


def session(socket: Any, prompt: str = "run it") -> list[list[Any]]:
    """Codex CLI's pattern on one connection: a warm-up, the turn naming it, the tool output naming that."""
    socket.send({"type": "response.create", "model": "gpt-6", "input": [], "generate": False})
    warmup = []
    for event in socket:
        warmup.append(event)
        if event.type == "response.completed":
            break
    first = answer(socket, model="gpt-6", input=prompt, previous_response_id=warmup[-1].response.id)
    if first[-1].type == "error":
        return [warmup, first]
    called = first[-1].response
    output = [{"type": "function_call_output", "call_id": "call_capture_1", "output": "hi"}]
    return [warmup, first, answer(socket, model="gpt-6", input=output, previous_response_id=called.id)]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[Any]], Listening]:
    directory = tmp_path_factory.mktemp("websocket")
    upstream_ca = make_test_ca(directory, ("api.openai.com",))
    server = ScriptedServer(tool_loop("exec_command", {"cmd": "echo hi"}), tls=upstream_ca.server_context)
    cassette = directory / "c.json"
    listening = Listening({"api.openai.com": server.url}, upstream_ca.cert_path, ca_directory=directory / "ca")
    try:
        with recording(cassette, listening) as proxy:
            assert proxy.ca_cert is not None
            with through_proxy(proxy.url, proxy.ca_cert) as socket:
                live = session(socket)
    finally:
        server.close()
    return cassette, live, Listening(ca_directory=directory / "ca")


def dumped(answers: list[list[Any]]) -> list[list[dict[str, Any]]]:
    return [[event.model_dump(exclude_none=True) for event in events] for events in answers]


def test_the_session_replays_offline_message_for_message(recorded: tuple[Path, list[list[Any]], Listening]) -> None:
    cassette, live, listening = recorded
    with replaying(cassette, listening=listening, timing=None) as proxy:
        assert proxy.ca_cert is not None
        with through_proxy(proxy.url, proxy.ca_cert) as socket:
            replayed = session(socket)
    assert dumped(replayed) == dumped(live)
    assert replayed[-1][-1].response.output_text == "The command printed llmproxy-ok."
    assert proxy.misses == []
    assert proxy.unused == []


def test_a_request_sent_whole_is_served_the_same(recorded: tuple[Path, list[list[Any]], Listening]) -> None:
    """After a reconnection Codex sends the whole input with no `previous_response_id`: the same request."""
    cassette, live, listening = recorded
    called = live[1][-1].response
    history = [{"role": "user", "content": "run it"}, *(item.model_dump(exclude_none=True) for item in called.output)]
    output = {"type": "function_call_output", "call_id": "call_capture_1", "output": "hi"}
    with replaying(cassette, listening=listening, timing=None) as proxy:
        assert proxy.ca_cert is not None
        with through_proxy(proxy.url, proxy.ca_cert) as socket:
            socket.send({"type": "response.create", "model": "gpt-6", "input": [], "generate": False})
            next(event for event in socket if event.type == "response.completed")
            answer(socket, model="gpt-6", input="run it")
            whole = answer(socket, model="gpt-6", input=[*history, output])
    assert whole[-1].response.output_text == "The command printed llmproxy-ok."
    assert proxy.misses == []


def test_a_changed_request_is_refused_saying_where_it_differs(
    recorded: tuple[Path, list[list[Any]], Listening],
) -> None:
    cassette, _, listening = recorded
    with replaying(cassette, listening=listening, timing=None) as proxy:
        assert proxy.ca_cert is not None
        with through_proxy(proxy.url, proxy.ca_cert) as socket:
            _, refused = session(socket, prompt="run something else")
    (error,) = refused
    assert error.type == "error"
    assert error.status == 400  # the API's invalid-request error: Codex does not retry it
    assert "closest is exchange 2" in error.error.message
    assert "$.input[0].content" in error.error.message
    assert len(proxy.misses) == 1


def timed_cassette(path: Path) -> list[float]:
    """A cassette of one WebSocket answer whose ten messages came 60 ms apart; their offsets."""
    request = factory.request(
        {"type": "response.create", "model": "m", "input": "hi"},
        method="GET",
        scheme="wss",
        host="api.openai.com",
        path="/v1/responses",
        headers=(("upgrade", "websocket"),),
    )
    events = [{"type": "response.in_progress", "response": {"id": "resp_1"}} for _ in range(9)]
    events.append({"type": "response.completed", "response": {"id": "resp_1", "output": []}})
    messages = tuple(RawEvent(float(INTERVAL_MS * (i + 1)), orjson.dumps(e)) for i, e in enumerate(events))
    response = RawResponse(101, "Switching Protocols", "HTTP/1.1", (), None, messages, None)
    writer = CassetteWriter.open(path, Redactor())
    writer.add(RawExchange(request, response, None, datetime.now(UTC), 60.0, 600.0, websocket=1))
    writer.close()
    return [event.t_ms for event in messages]


def arrivals(proxy: Any) -> list[float]:
    """Milliseconds from sending the request to each message's arrival (read raw: the SDK's event iterator
    may hand parsed events over late)."""
    with through_proxy(proxy.url, proxy.ca_cert) as socket:
        start = time.monotonic()
        socket.send({"type": "response.create", "model": "m", "input": "hi"})
        offsets, message = [], b""
        while b"response.completed" not in message:
            message = socket.recv_bytes()
            offsets.append((time.monotonic() - start) * 1000)
        return offsets


def test_messages_keep_their_recorded_timing_or_come_at_once(tmp_path: Path) -> None:
    cassette = tmp_path / "timed.json"
    recorded = timed_cassette(cassette)
    listening = Listening(ca_directory=tmp_path / "ca")
    with replaying(cassette, listening=listening) as proxy:
        paced = arrivals(proxy)
    assert max(abs(p - r) for p, r in zip(paced, recorded, strict=True)) < TOLERANCE_MS, (recorded, paced)
    with replaying(cassette, listening=listening, timing=None) as proxy:
        instant = arrivals(proxy)
    assert instant[-1] < recorded[-1] / 4


@pytest.mark.parametrize("how", ["allowed out", "new_episodes"])
def test_a_websocket_goes_to_the_network_whole_when_let_out(
    tmp_path: Path, recorded: tuple[Path, list[list[Any]], Listening], how: str
) -> None:
    """It cannot be half replayed, half forwarded: a host let out, or a record mode that forwards, gets it
    whole from the upstream (and new_episodes records it)."""
    source, _, _ = recorded
    cassette = tmp_path / "c.json"
    cassette.write_bytes(source.read_bytes())
    upstream_ca = make_test_ca(tmp_path, ("api.openai.com",))
    server = ScriptedServer(tool_loop("exec_command", {"cmd": "echo hi"}), tls=upstream_ca.server_context)
    listening = Listening({"api.openai.com": server.url}, upstream_ca.cert_path, ca_directory=tmp_path / "ca")
    options: dict[str, Any] = (
        {"allow_hosts": ["api.openai.com"]} if how == "allowed out" else {"mode": RecordMode.NEW_EPISODES}
    )
    try:
        with replaying(cassette, listening=listening, **options) as proxy:
            assert proxy.ca_cert is not None
            with through_proxy(proxy.url, proxy.ca_cert) as socket:
                answers = session(socket)
    finally:
        server.close()
    assert answers[-1][-1].response.output_text == "The command printed llmproxy-ok."
    assert len(server.messages) == 3  # the upstream answered all of it
    recorded_again = len(load_cassette(cassette).exchanges) - len(load_cassette(source).exchanges)
    assert recorded_again == (3 if how == "new_episodes" else 0)
