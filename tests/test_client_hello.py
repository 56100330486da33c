"""The ClientHello the lean door reads before TLS starts: real hellos from Python's own TLS client (OpenSSL), whole,
cut short, spread over several records, and bytes that are no TLS at all."""

import ssl

import pytest

from llmproxy.client_hello import ClientHello, NotTls, parse


def hello(server_name: str | None, alpn: list[str] | None) -> bytes:
    """The ClientHello OpenSSL sends for `server_name` offering `alpn`."""
    context = ssl.create_default_context()
    if alpn is not None:
        context.set_alpn_protocols(alpn)
    if server_name is None:
        context.check_hostname = False
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = context.wrap_bio(incoming, outgoing, server_hostname=server_name)
    with pytest.raises(ssl.SSLWantReadError):
        client.do_handshake()
    return outgoing.read()


def test_the_name_and_protocols_a_client_asks_for() -> None:
    parsed = parse(hello("api.anthropic.com", ["h2", "http/1.1"]))
    assert parsed == ClientHello("api.anthropic.com", ("h2", "http/1.1"))
    assert parsed.speaks_http1


def test_a_client_that_offers_only_http2_cannot_be_served_http1() -> None:
    assert not parse(hello("api.openai.com", ["h2"])).speaks_http1  # type: ignore[union-attr]


def test_no_alpn_and_no_name() -> None:
    assert parse(hello(None, None)) == ClientHello(None, ())


def test_a_hello_cut_short_needs_more_bytes() -> None:
    data = hello("api.anthropic.com", ["http/1.1"])
    assert all(parse(data[:size]) is None for size in (1, 5, 40, len(data) - 1))


def test_a_hello_spread_over_records() -> None:
    data = hello("generativelanguage.googleapis.com", ["http/1.1"])
    body = data[5:]
    records = b"".join(
        bytes([0x16, 3, 1]) + len(piece).to_bytes(2) + piece for piece in (body[:7], body[7:100], body[100:])
    )
    assert parse(records) == ClientHello("generativelanguage.googleapis.com", ("http/1.1",))
    assert parse(records[:-1]) is None


@pytest.mark.parametrize(
    "data",
    [
        b"GET / HTTP/1.1\r\n",
        b"SSH-2.0-OpenSSH_9.6\r\n",
        b"\x16\x03\x01\x00\x04\x02\x00\x00\x00",
        b"\x16\x09\x01\x00\x01",
    ],
    ids=["http", "ssh", "server-hello", "bad-version"],
)
def test_bytes_that_are_no_client_hello(data: bytes) -> None:
    with pytest.raises(NotTls):
        parse(data)


def test_a_malformed_hello_is_no_tls() -> None:
    body = b"\x01\x00\x00\x03\x03\x03\x00"  # a ClientHello of three bytes: no room for its random
    with pytest.raises(NotTls):
        parse(b"\x16\x03\x01" + len(body).to_bytes(2) + body)
