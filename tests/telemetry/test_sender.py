"""The OTLP sender reads a collector's answer itself: its status, its framing (a length, chunks, or the
connection's end) and whether the connection stays open — the next answer starts where this one ends."""

import http.client
import io

import pytest

from llmproxy.telemetry.otlp import answer


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
