"""Chaos on mocked and replayed answers, through both doors (the proxy, and the relay clients reach by base
URL): the same seed and the same requests give the same faults; a stream is cut and a connection dropped on
either door; a mock turn's own chaos fails the turn without using it up; a request's `x-llmproxy-chaos`
header applies to it alone."""

import json
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from llmproxy.intercept.profile import ChaosProfile
from llmproxy.intercept.rules import ChaosFile, Rule
from llmproxy.plan import InterceptPlan
from llmproxy.session import Listening, Session, mocking
from tests.mock.sdk_clients import anthropic_client

STREAM = {
    "model": "claude-haiku-4-5",
    "max_tokens": 64,
    "stream": True,
    "messages": [{"role": "user", "content": "hi"}],
}
PLAIN = {**STREAM, "stream": False}
HEADERS = {"host": "api.anthropic.com", "anthropic-version": "2023-06-01", "x-api-key": "sk-ant-test"}
TEXT = "one two three four five six seven eight"


def session(tmp_path: Path, expectations: dict[str, Any], *profiles: dict[str, Any], seed: int = 7) -> Any:
    path = tmp_path / "expectations.json"
    path.write_text(json.dumps(expectations))
    rules = tuple(Rule(chaos=ChaosProfile.model_validate(profile)) for profile in profiles)
    plan = InterceptPlan(ChaosFile(seed=seed, rules=rules))
    return mocking(path, Listening(ca_directory=tmp_path / "ca"), intercept=plan)


ANSWERS = {"expectations": [{"respond": {"text": TEXT}}]}


@contextmanager
def clients(proxy: Session) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    """An httpx client through the proxy, and one on the relay's base URL; closed before the session is."""
    trust = ssl.create_default_context(cafile=proxy.environment["SSL_CERT_FILE"])
    with (
        httpx.Client(proxy=proxy.url, verify=trust, timeout=10, base_url="https://api.anthropic.com") as through,
        httpx.Client(timeout=10, base_url=proxy.base_url) as direct,
    ):
        yield through, direct


def statuses(client: httpx.Client, count: int) -> list[int]:
    return [client.post("/v1/messages", json=PLAIN, headers=HEADERS).status_code for _ in range(count)]


def test_the_same_seed_gives_the_same_faults_on_both_doors_and_in_every_run(tmp_path: Path) -> None:
    runs = []
    for door in ("proxy", "relay", "proxy"):
        with (
            session(tmp_path, ANSWERS, {"errorStatus": 500, "errorProbability": 0.4}) as proxy,
            clients(proxy) as (
                through,
                direct,
            ),
        ):
            runs.append(statuses(through if door == "proxy" else direct, 20))
    assert runs[0] == runs[1] == runs[2]
    assert 3 <= runs[0].count(500) <= 14


def read_stream(client: httpx.Client) -> tuple[int, bytes]:
    data = b""
    try:
        with client.stream("POST", "/v1/messages", json=STREAM, headers=HEADERS) as response:
            for piece in response.iter_raw():
                data += piece
    except httpx.RemoteProtocolError:
        pass  # cut: the answer ended without its end
    return response.status_code, data


def test_a_mocked_stream_is_cut_the_same_on_both_doors(tmp_path: Path) -> None:
    with (
        session(
            tmp_path, ANSWERS, {"truncateAfterEvents": 3, "malformedSse": True, "malformedAfterEvents": 1}
        ) as proxy,
        clients(proxy) as (through, direct),
    ):
        by_proxy, by_relay = read_stream(through), read_stream(direct)
        summary_before_close = dict(proxy.intercept.injected)
    assert by_proxy == by_relay
    status, data = by_proxy
    events = data.split(b"\n\n")[:-1]
    assert status == 200
    assert len(events) == 4  # three kept, one corrupt copy after the first
    assert events[0].startswith(b"event: message_start\n")
    assert events[1].startswith(b"event: message_start\n")  # the broken copy keeps its event name
    with pytest.raises(json.JSONDecodeError):
        json.loads(events[1].split(b"data: ", 1)[1])
    assert {kind.value: count for kind, count in summary_before_close.items()} == {"truncate": 2, "malformed": 2}


def test_a_dropped_connection_on_both_doors(tmp_path: Path) -> None:
    with session(tmp_path, ANSWERS, {"connectionDrop": True}) as proxy, clients(proxy) as (through, direct):
        for client in (through, direct):
            with pytest.raises(httpx.RemoteProtocolError):
                client.post("/v1/messages", json=PLAIN, headers=HEADERS)
    assert "drop 2" in proxy.summary


def test_latency_delays_a_mocked_answer(tmp_path: Path) -> None:
    import time

    with session(tmp_path, ANSWERS, {"latency": {"firstByteMs": 300}}) as proxy, clients(proxy) as (through, _):
        started = time.monotonic()
        assert through.post("/v1/messages", json=PLAIN, headers=HEADERS).json()["content"][0]["text"] == TEXT
        assert time.monotonic() - started >= 0.3


def test_a_turns_chaos_fails_it_twice_then_the_sdk_gets_that_turn(tmp_path: Path) -> None:
    turns = {
        "expectations": [
            {
                "conversation": {
                    "turns": [
                        {
                            "respond": {"text": "first"},
                            "chaos": {"errorStatus": 529, "retryAfter": 0.05, "failRequestCount": 2},
                        },
                        {"respond": {"text": "second"}},
                    ]
                }
            }
        ]
    }
    with session(tmp_path, turns) as proxy, anthropic_client(proxy, retries=2) as claude:
        ask = {"model": "claude-haiku-4-5", "max_tokens": 16}
        first = claude.messages.create(**ask, messages=[{"role": "user", "content": "one"}])
        second = claude.messages.create(**ask, messages=[{"role": "user", "content": "two"}])
        outcomes = proxy.intercept.aftermath.outcomes
    assert (first.content[0].text, second.content[0].text) == ("first", "second")
    assert [(o.fault.rule, o.next.value, o.recovered) for o in outcomes] == [
        ("conversation 1 turn 1", "retried", True),
        ("conversation 1 turn 1", "retried", True),
    ]


def test_a_requests_own_header_applies_to_it_alone(tmp_path: Path) -> None:
    with session(tmp_path, ANSWERS) as proxy, clients(proxy) as (through, _):
        headers = {**HEADERS, "x-llmproxy-chaos": json.dumps({"errorStatus": 429, "retryAfter": "3"})}
        refused = through.post("/v1/messages", json=PLAIN, headers=headers)
        assert (refused.status_code, refused.headers["retry-after"]) == (429, "3")
        assert refused.json()["error"]["type"] == "rate_limit_error"
        assert through.post("/v1/messages", json=PLAIN, headers=HEADERS).status_code == 200
        bad = through.post("/v1/messages", json=PLAIN, headers={**HEADERS, "x-llmproxy-chaos": '{"quotaLimit": 1}'})
        garbled = through.post("/v1/messages", json=PLAIN, headers={**HEADERS, "x-llmproxy-chaos": "{oops"})
    assert (garbled.status_code, garbled.json()["error"]["type"]) == (400, "invalid_request_error")
    assert garbled.json()["error"]["message"].startswith("x-llmproxy-chaos: not JSON: ")
    assert bad.status_code == 400
    assert bad.json()["error"]["message"].startswith("x-llmproxy-chaos: a request quota")
