"""The OTLP sender reads a collector's answer itself: its status, its framing (a length, chunks, or the
connection's end) and whether the connection stays open — the next answer starts where this one ends."""

import http.client
import io
import socket
import threading

import pytest

from llmproxy.telemetry.otlp import Sender, answer
from llmproxy.telemetry.settings import Destination


def test_answers_one_after_another_on_a_kept_alive_connection() -> None:
    answers = io.BytesIO(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 3\r\n\r\nabc"
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nwxyz\r\n2\r\nab\r\n0\r\nTrailer: t\r\n\r\n"
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    assert answer(answers) == (200, False)
    assert answer(answers) == (200, False)  # past the interim answer, to the final one, its chunks read
    assert answer(answers) == (503, True)
    with pytest.raises(http.client.RemoteDisconnected):
        answer(answers)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", (200, True)),
        (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", (200, False)),
        (b"HTTP/1.1 202 Accepted\r\n\r\nto the end", (202, True)),
        (b"HTTP/1.1 204 No Content\r\n\r\n", (204, False)),
    ],
)
def test_whether_the_connection_stays_open_is_read_off_the_answer(given: bytes, expected: tuple[int, bool]) -> None:
    assert answer(io.BytesIO(given)) == expected


@pytest.mark.parametrize(
    "given",
    [
        b"SSH-2.0-OpenSSH\r\n",
        b"HTTP/1.1 abc\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
    ],
)
def test_what_is_not_an_answer_is_an_http_error(given: bytes) -> None:
    with pytest.raises(http.client.HTTPException):
        answer(io.BytesIO(given))


def test_a_kept_alive_connection_the_collector_closed_is_opened_again() -> None:
    """The collector answers two posts on one connection, then closes it: the third post finds it closed and
    is sent again on a new connection, taken."""
    listener = socket.create_server(("127.0.0.1", 0))
    connections: list[int] = []

    def collect() -> None:
        for answered in (2, 1):
            connection, _ = listener.accept()
            connections.append(answered)
            with connection, connection.makefile("rb") as requests:
                for _ in range(answered):
                    while requests.readline() not in (b"\r\n", b""):
                        pass
                    requests.read(4)
                    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    collector = threading.Thread(target=collect, daemon=True)
    collector.start()
    sender = Sender(Destination(f"http://127.0.0.1:{listener.getsockname()[1]}/v1/traces"))
    try:
        assert [sender.post(b"span") for _ in range(3)] == [True, True, True]
    finally:
        sender.close()
        listener.close()
    collector.join(5)
    assert connections == [2, 1]
