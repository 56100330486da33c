"""The loopback relay as base-URL clients meet it (`llmproxy mock`): HTTP/1.1 framing (read by httptools, Node's
llhttp) the way real clients send it — chunked uploads, `Expect: 100-continue`, pipelined requests, keep-alive,
`Connection: close`, HTTP/1.0 clients — and broken framing answered with a 400 that says why, while the relay keeps
serving."""

import json
import socket
from collections.abc import Iterator

import pytest

from llmproxy.session import Listening, Session, mocking

BODY = json.dumps({"model": "claude-haiku-4-5", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]})
PACED = json.dumps(  # answered as a stream with a pause before its first event
    {"model": "claude-haiku-4-5", "max_tokens": 8, "stream": True, "messages": [{"role": "user", "content": "slowly"}]}
)
HEAD = (
    "POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\n"
    "anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n"
)


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    directory = tmp_path_factory.mktemp("relay")
    path = directory / "expectations.json"
    expectation = {"match": {"latestMessageContains": "hi"}, "respond": {"text": "relayed"}}
    paced = {"match": {"latestMessageContains": "slowly"}, "respond": {"text": "paced", "physics": {"ttftMs": 20}}}
    path.write_text(json.dumps({"expectations": [expectation, paced]}))
    with mocking(path, Listening(ca_directory=directory / "ca")) as session:
        yield session


def connect(mock: Session) -> socket.socket:
    port = int(mock.base_url.rsplit(":", 1)[1])
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def read_response(sock: socket.socket, pending: bytearray) -> tuple[int, bytes]:
    """Status and body of the next response (framed by content-length) on the connection."""
    while b"\r\n\r\n" not in pending:
        pending += sock.recv(65536)
    head, _, rest = bytes(pending).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:"))
    while len(rest) < length:
        rest += sock.recv(65536)
    pending[:] = rest[length:]
    return int(lines[0].split()[1]), rest[:length]


def answer_text(body: bytes) -> str:
    return "".join(block["text"] for block in json.loads(body)["content"])


def test_a_chunked_upload_is_read_whole(mock: Session) -> None:
    half = len(BODY) // 2
    chunks = f"{half:x}\r\n{BODY[:half]}\r\n{len(BODY) - half:x};ext=1\r\n{BODY[half:]}\r\n0\r\n\r\n"
    with connect(mock) as sock:
        sock.sendall(f"{HEAD}transfer-encoding: chunked\r\n\r\n".encode())
        sock.sendall(chunks.encode())
        status, body = read_response(sock, bytearray())
    assert (status, answer_text(body)) == (200, "relayed")


def test_expect_100_continue_gets_its_interim_answer(mock: Session) -> None:
    with connect(mock) as sock:
        sock.sendall(f"{HEAD}content-length: {len(BODY)}\r\nexpect: 100-continue\r\n\r\n".encode())
        assert sock.recv(65536) == b"HTTP/1.1 100 Continue\r\n\r\n"  # before any of the body was sent
        sock.sendall(BODY.encode())
        status, body = read_response(sock, bytearray())
    assert (status, answer_text(body)) == (200, "relayed")


def test_pipelined_requests_are_answered_in_order(mock: Session) -> None:
    request = f"{HEAD}content-length: {len(BODY)}\r\n\r\n{BODY}"
    with connect(mock) as sock:
        sock.sendall((request * 3).encode())
        pending = bytearray()
        answers = [read_response(sock, pending) for _ in range(3)]
    assert answers == [answers[0]] * 3
    assert answer_text(answers[0][1]) == "relayed"


@pytest.mark.parametrize(
    ("framing", "reason"),
    [
        ("content-length: twelve\r\n\r\n", "Invalid character in Content-Length"),
        ("transfer-encoding: chunked\r\n\r\nzz\r\n", "Invalid character in chunk size"),
    ],
)
def test_broken_framing_gets_a_400_that_says_why_and_the_relay_serves_on(
    mock: Session, framing: str, reason: str
) -> None:
    with connect(mock) as sock:
        sock.sendall(f"{HEAD}{framing}".encode())
        status, body = read_response(sock, bytearray())
        assert (status, body.decode()) == (400, f"llmproxy: malformed request: {reason}\n")
        assert sock.recv(65536) == b""  # closed: nothing after broken framing can be trusted
    with connect(mock) as sock:
        sock.sendall(f"{HEAD}content-length: {len(BODY)}\r\n\r\n{BODY}".encode())
        assert answer_text(read_response(sock, bytearray())[1]) == "relayed"


def read_to_close(sock: socket.socket) -> bytes:
    received = bytearray()
    while chunk := sock.recv(65536):
        received += chunk
    return bytes(received)


def test_connection_close_ends_the_connection_after_its_answer(mock: Session) -> None:
    request = f"{HEAD}content-length: {len(BODY)}\r\nconnection: close\r\n\r\n{BODY}"
    with connect(mock) as sock:
        sock.sendall((request * 2).encode())  # the second is never answered: the client said it was done
        received = read_to_close(sock)
    head, _, body = received.partition(b"\r\n\r\n")
    assert b"\r\nconnection: close" in head.lower()
    assert answer_text(body) == "relayed"  # exactly one answer, then the connection closed


def test_an_http_1_0_client_is_answered_and_the_connection_closed(mock: Session) -> None:
    request = f"{HEAD.replace('HTTP/1.1', 'HTTP/1.0', 1)}content-length: {len(BODY)}\r\n\r\n{BODY}"
    with connect(mock) as sock:
        sock.sendall(request.encode())
        head, _, body = read_to_close(sock).partition(b"\r\n\r\n")
    assert b"content-length:" in head.lower()
    assert answer_text(body) == "relayed"


def test_an_http_1_0_client_asking_keep_alive_is_told_the_connection_closes(mock: Session) -> None:
    """The relay serves an HTTP/1.0 client one request per connection (keep-alive is optional in HTTP/1.0), and the
    answer says so, so the client does not wait for a second answer on it."""
    request = (
        f"{HEAD.replace('HTTP/1.1', 'HTTP/1.0', 1)}connection: keep-alive\r\ncontent-length: {len(BODY)}\r\n\r\n{BODY}"
    )
    with connect(mock) as sock:
        sock.sendall(request.encode())
        head, _, body = read_to_close(sock).partition(b"\r\n\r\n")
    assert b"\r\nconnection: close" in head.lower()
    assert answer_text(body) == "relayed"


def test_keep_alive_serves_requests_one_after_another_on_one_connection(mock: Session) -> None:
    request = f"{HEAD}content-length: {len(BODY)}\r\n\r\n{BODY}".encode()
    with connect(mock) as sock:
        pending = bytearray()
        answers = []
        for _ in range(3):  # each sent only once the one before is answered
            sock.sendall(request)
            answers.append(read_response(sock, pending))
    assert [(status, answer_text(body)) for status, body in answers] == [(200, "relayed")] * 3


def test_a_paced_stream_to_an_http_1_0_client_is_unframed_and_ends_with_the_connection(mock: Session) -> None:
    request = f"{HEAD.replace('HTTP/1.1', 'HTTP/1.0', 1)}content-length: {len(PACED)}\r\n\r\n{PACED}"
    with connect(mock) as sock:
        sock.sendall(request.encode())
        head, _, events = read_to_close(sock).partition(b"\r\n\r\n")
    assert b"transfer-encoding" not in head.lower()  # an HTTP/1.0 client cannot read chunks
    assert events.startswith(b"event: message_start")
    assert b"paced" in events
    assert events.rstrip().endswith(b'{"type":"message_stop"}')


def read_chunked(sock: socket.socket, pending: bytearray) -> tuple[bytes, bytes]:
    """Head and de-chunked body of the next response, framed by chunks, on the connection."""
    while b"\r\n\r\n" not in pending:
        pending += sock.recv(65536)
    head, _, rest = bytes(pending).partition(b"\r\n\r\n")
    pending[:] = rest
    body = bytearray()
    while True:
        while b"\r\n" not in pending:
            pending += sock.recv(65536)
        size_line, _, rest = bytes(pending).partition(b"\r\n")
        size = int(size_line, 16)
        while len(rest) < size + 2:
            rest += sock.recv(65536)
        body += rest[:size]
        pending[:] = rest[size + 2 :]
        if size == 0:
            return head, bytes(body)


def test_a_request_pipelined_behind_a_paced_stream_is_answered_after_it(mock: Session) -> None:
    first = f"{HEAD}content-length: {len(PACED)}\r\n\r\n{PACED}"
    second = f"{HEAD}content-length: {len(BODY)}\r\n\r\n{BODY}"
    with connect(mock) as sock:
        sock.sendall((first + second).encode())
        pending = bytearray()
        head, events = read_chunked(sock, pending)
        status, body = read_response(sock, pending)
    assert b"transfer-encoding: chunked" in head.lower()
    assert events.rstrip().endswith(b'{"type":"message_stop"}')
    assert (status, answer_text(body)) == (200, "relayed")


def test_an_answer_to_head_has_no_body_and_the_connection_serves_on(mock: Session) -> None:
    with connect(mock) as sock:
        sock.sendall(b"HEAD /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        sock.sendall(f"{HEAD}content-length: {len(BODY)}\r\n\r\n{BODY}".encode())
        pending = bytearray()
        while pending.count(b"\r\n\r\n") < 2:  # both heads, with nothing between them
            pending += sock.recv(65536)
        head, _, rest = bytes(pending).partition(b"\r\n\r\n")
        assert rest.startswith(b"HTTP/1.1 200 ")
        assert b"content-length:" in head.lower()
        status, body = read_response(sock, bytearray(rest))
    assert (status, answer_text(body)) == (200, "relayed")


def test_a_request_head_too_large_gets_a_431_and_the_relay_serves_on(mock: Session) -> None:
    huge = "x" * (300 * 1024)
    with connect(mock) as sock:
        sock.sendall(f"{HEAD}x-padding: {huge}\r\ncontent-length: {len(BODY)}\r\n\r\n{BODY}".encode())
        status, body = read_response(sock, bytearray())
        assert (status, body.decode()) == (431, "llmproxy: malformed request: a request head of over 262,144 bytes\n")
    with connect(mock) as sock:
        sock.sendall(f"{HEAD}content-length: {len(BODY)}\r\n\r\n{BODY}".encode())
        assert answer_text(read_response(sock, bytearray())[1]) == "relayed"
