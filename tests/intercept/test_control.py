"""The control API over real HTTP on 127.0.0.1: registering per host with a TTL, merge patches that keep the
TTL, removal, and that only loopback clients with the run's token are answered."""

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from llmproxy.control.auth import Tokens
from llmproxy.control.server import ControlPlane, ControlServer
from llmproxy.intercept.decision import Refusal
from llmproxy.intercept.engine import Intercept
from tests.intercept.requests import Clock, openai

TOKEN = "test-token-0123456789"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def control(clock: Clock) -> Iterator[ControlServer]:
    server = ControlServer(ControlPlane(Intercept(clock=clock)), Tokens(TOKEN))
    yield server
    server.close()


def call(
    server: ControlServer, method: str, body: Any = None, token: str | None = TOKEN, query: str = ""
) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.url + query, data=data, method=method)
    if token is not None:
        request.add_header("authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_put_registers_a_host_for_its_ttl_then_it_expires(control: ControlServer, clock: Clock) -> None:
    put = {"host": "api.openai.com", "chaos": {"errorStatus": 503, "errorProbability": 1.0}, "ttlMillis": 60_000}
    assert call(control, "PUT", put) == (200, {"status": "registered", "host": "api.openai.com", "ttlMillis": 60_000})
    assert isinstance(control.intercept.decide(openai()), Refusal)
    clock.now += 20
    status, state = call(control, "GET")
    assert status == 200
    assert state["services"] == {"api.openai.com": {"errorStatus": 503, "errorProbability": 1.0}}
    assert state["ttlRemainingMillis"] == {"api.openai.com": 40_000}
    clock.now += 40
    assert call(control, "GET")[1]["services"] == {}
    assert not isinstance(control.intercept.decide(openai()), Refusal)


def test_patch_merges_into_the_profile_and_keeps_the_ttl(control: ControlServer, clock: Clock) -> None:
    call(
        control,
        "PUT",
        {"host": "api.openai.com", "chaos": {"errorStatus": 503, "errorProbability": 0.3}, "ttlMillis": 10_000},
    )
    clock.now += 4
    status, patched = call(
        control, "PATCH", {"host": "api.openai.com", "chaos": {"errorProbability": 0.5, "retryAfter": "2"}}
    )
    assert status == 200
    assert patched == {
        "status": "patched",
        "host": "api.openai.com",
        "chaos": {"errorStatus": 503, "errorProbability": 0.5, "retryAfter": "2"},
    }
    assert call(control, "GET")[1]["ttlRemainingMillis"] == {"api.openai.com": 6_000}
    status, removed = call(control, "PATCH", {"host": "api.openai.com", "chaos": {"retryAfter": None}})
    assert "retryAfter" not in removed["chaos"]  # null removes a field (RFC 7396)


def test_bad_requests_get_400_naming_the_problem(control: ControlServer) -> None:
    assert call(control, "PATCH", {"host": "nowhere.example", "chaos": {"errorStatus": 500}})[0] == 404
    status, body = call(control, "PUT", {"host": "a.example", "chaos": {"quotaLimit": 5}})
    assert status == 400
    assert "quotaLimit and quotaWindowMillis" in body["error"]
    status, body = call(control, "PUT", {"host": "a.example", "chaos": {"errorStatus": 500}, "ttlMillis": 0})
    assert status == 400
    assert "ttlMillis" in body["error"]
    assert call(control, "PUT", {"chaos": {"errorStatus": 500}})[0] == 400
    assert call(control, "PUT", {"clear": True, "host": "a.example"})[0] == 400
    assert call(control, "POST", {})[0] == 405


def test_remove_and_clear(control: ControlServer) -> None:
    for host in ("a.example", "b.example", "c.example"):
        call(control, "PUT", {"host": host, "chaos": {"errorStatus": 500}})
    assert call(control, "PUT", {"host": "a.example", "remove": True}) == (
        200,
        {"status": "removed", "host": "a.example"},
    )
    assert call(control, "DELETE", query="?host=b.example")[0] == 200
    assert set(call(control, "GET")[1]["services"]) == {"c.example"}
    assert call(control, "DELETE") == (200, {"status": "cleared"})
    assert call(control, "GET")[1]["services"] == {}


@pytest.mark.parametrize("token", [None, "wrong-token", TOKEN + "x"])
def test_a_wrong_or_missing_token_gets_401(control: ControlServer, token: str | None) -> None:
    status, body = call(control, "PUT", {"host": "a.example", "chaos": {"errorStatus": 500}}, token=token)
    assert status == 401
    assert "bearer token" in body["error"]
    assert not control.intercept.hosts


def test_only_loopback_is_listened_to_and_answered(control: ControlServer) -> None:
    assert control.url.startswith("http://127.0.0.1:")
    assert control.tokens.grant("192.168.1.20", f"Bearer {TOKEN}") is None
    assert control.tokens.grant("127.0.0.1", f"Bearer {TOKEN}") is not None
    port = int(control.url.split(":")[2].split("/")[0])
    outside = [address for address in _addresses() if not address.startswith("127.")]
    for address in outside:  # the machine's other addresses: nothing listens there
        with pytest.raises(ConnectionRefusedError), socket.create_connection((address, port), timeout=1):
            pass


def _addresses() -> list[str]:
    try:
        return sorted({info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)})
    except OSError:
        return []
