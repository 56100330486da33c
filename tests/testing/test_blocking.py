"""`--llmproxy-block-network` beside `--llmproxy-allow-host`: the proxy runs in the pytest process, so what an entry
lets a replaying test reach, the blocker lets the process reach — the name's lookups, then the addresses they gave
— and nothing else. The resolver and `connect` are stand-ins: nothing here leaves the machine."""

import socket
from typing import Any

import pytest

from llmproxy.egress import EgressPolicy
from llmproxy.testing.blocking import Blocker, NetworkBlocked


def test_an_allowed_name_is_looked_up_and_the_addresses_it_gave_are_reached(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {"api.example.com": "203.0.113.5", "other.example.com": "203.0.113.6"}
    connected: list[Any] = []

    def getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[host], port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)  # before the blocker wraps it
    monkeypatch.setattr(socket.socket, "connect", lambda sock, address: connected.append(address))
    blocker = Blocker(EgressPolicy.parse(["api.example.com", "198.51.100.7:443"]))
    blocker.install()
    try:
        blocker.blocking = True
        assert socket.getaddrinfo("api.example.com", 443)[0][4] == ("203.0.113.5", 443)
        with socket.socket() as sock:
            sock.connect(("203.0.113.5", 443))
            sock.connect(("198.51.100.7", 443))  # an address entry, on its port
            for address in (("203.0.113.6", 443), ("198.51.100.7", 80)):
                with pytest.raises(NetworkBlocked):
                    sock.connect(address)
        with pytest.raises(NetworkBlocked):
            socket.getaddrinfo("other.example.com", 443)
    finally:
        blocker.uninstall()
    assert connected == [("203.0.113.5", 443), ("198.51.100.7", 443)]
    assert blocker.take() == [
        "a connection to 203.0.113.6:443",
        "a connection to 198.51.100.7:80",
        "a name lookup (getaddrinfo) of other.example.com",
    ]
