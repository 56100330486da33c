"""Cutting a WebSocket connection into exchanges: what belongs to which answer, and what cannot be recorded."""

import orjson

from llmproxy.cassette.socket_capture import SocketCapture, Upgrade
from llmproxy.model.exchange import RawExchange
from llmproxy.providers.openai_responses.websocket import RESPONSES_WEBSOCKET
from tests.cassette.factory import request

REQUEST = request(
    method="GET", scheme="wss", host="api.openai.com", path="/v1/responses", headers=(("upgrade", "websocket"),)
)
ASK = orjson.dumps({"type": "response.create", "model": "m", "input": []})
CREATED = b'{"type":"response.created","response":{"id":"r"}}'
DONE = b'{"type":"response.completed","response":{"id":"r"}}'
LIMITS = b'{"type":"codex.rate_limits"}'


def capture() -> SocketCapture:
    upgrade = Upgrade(REQUEST, 101, "Switching Protocols", "HTTP/1.1", (("upgrade", "websocket"),))
    return SocketCapture(RESPONSES_WEBSOCKET, upgrade, connection=4)


def test_an_answer_is_an_exchange_with_its_messages_timed_from_the_request() -> None:
    socket = capture()
    assert socket.client(ASK, True, 100.0) is None
    assert socket.server(CREATED, True, 100.25) is None
    done = socket.server(DONE, True, 100.5)
    assert isinstance(done, RawExchange)
    assert done.request.body == ASK
    assert done.request.scheme == "wss"
    assert done.websocket == 4
    assert done.response is not None
    assert done.response.status == 101
    assert [(e.t_ms, e.data) for e in done.response.events or ()] == [(250.0, CREATED), (500.0, DONE)]
    assert (done.ttfb_ms, done.total_ms, done.error) == (250.0, 500.0, None)
    assert done.started_at.timestamp() == 100.0
    assert socket.close(None) is None
    assert socket.missed == []


def test_messages_between_answers_open_the_next_exchange() -> None:
    socket = capture()
    socket.server(LIMITS, True, 1.0)  # before any request
    socket.client(ASK, True, 2.0)
    done = socket.server(DONE, True, 2.1)
    assert done is not None
    assert done.response is not None
    assert [e.data for e in done.response.events or ()] == [LIMITS, DONE]
    socket.server(LIMITS, True, 3.0)  # after the last answer: nothing collects it
    assert socket.close(None) is None
    assert socket.missed == ["1 message(s) from the server after the last answer"]


def test_an_answer_cut_by_the_connection_ends_as_far_as_it_came_with_why() -> None:
    """The writer names it as a request the upstream never answered whole (and records it only if asked)."""
    socket = capture()
    socket.client(ASK, True, 1.0)
    socket.server(CREATED, True, 1.5)
    cut = socket.close("Client disconnected.")
    assert cut is not None
    assert cut.error == "the connection ended before the answer did: Client disconnected."
    assert cut.response is not None
    assert [e.data for e in cut.response.events or ()] == [CREATED]
    assert socket.missed == []


def test_what_is_not_a_request_is_named_and_a_new_request_ends_the_open_answer() -> None:
    socket = capture()
    socket.client(ASK, True, 1.0)
    assert socket.client(b'{"type":"response.steer","input":[]}', True, 1.1) is None
    assert socket.client(b"\x00\x01", False, 1.2) is None
    socket.server(b"\x02", False, 1.3)
    first = socket.client(ASK, True, 2.0)
    assert first is not None
    assert first.notes == (
        "the client sent a message that is not a request during the answer",
        "the client sent a message that is not a request during the answer",
        "the client sent its next request before this answer ended",
    )
    assert first.response is not None
    assert [(e.data, e.binary) for e in first.response.events or ()] == [(b"\x02", True)]
    assert socket.missed == [
        "'response.steer' messages from the client, which are not requests",
        "binary messages from the client, which are not requests",
    ]
