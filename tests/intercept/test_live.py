"""Faults on live upstream traffic, through `llmproxy record` against a local HTTPS upstream standing in for
api.anthropic.com: a real stream cut after N events or just before its end, a corrupt event slipped in, an
injected error answered in the upstream's place, latency before forwarding, a budget spent by real answers —
and the cassette keeps what the client received, marked injected."""

import json
import ssl
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from llmproxy.cassette.bodies import event_bytes
from llmproxy.cassette.store import load_cassette
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.intercept.rules import ChaosFile, Rule
from llmproxy.model import Completion, Usage
from llmproxy.plan import InterceptPlan
from llmproxy.providers.anthropic import MESSAGES
from llmproxy.session import Listening, Session, recording
from tests.certs import UpstreamCA, make_test_ca
from tests.conformance.server import LoopbackServer
from tests.conformance.server import Reply as Upstream

REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 64,
    "stream": True,
    "messages": [{"role": "user", "content": "hi"}],
}
ANSWER = Completion(text="one two three four five six", usage=Usage(input_tokens=1000, output_tokens=1000))
EVENTS = MESSAGES.encode_stream(ANSWER, REQUEST, delta_chars=4)
HEADERS = {"host": "api.anthropic.com", "anthropic-version": "2023-06-01", "x-api-key": "sk-ant-test"}


@pytest.fixture(scope="module")
def upstream_ca(tmp_path_factory: pytest.TempPathFactory) -> UpstreamCA:
    return make_test_ca(tmp_path_factory.mktemp("upstream"), ("api.anthropic.com",))


@pytest.fixture
def upstream(upstream_ca: UpstreamCA) -> Iterator[LoopbackServer]:
    with LoopbackServer(tls=upstream_ca.server_context) as server:
        yield server


def stream_reply(interval: float = 0.0) -> Upstream:
    return Upstream(200, {"content-type": "text/event-stream"}, events=list(EVENTS), interval=interval)


def run(
    tmp_path: Path, upstream: LoopbackServer, ca: UpstreamCA, chaos: ChaosFile, requests: int = 1
) -> tuple[Session, list[tuple[int, bytes, float]], Any]:
    """Record `requests` streamed messages through the proxy under `chaos`; each as (status, bytes, seconds)."""
    cassette = tmp_path / "run.json"
    listening = Listening({"api.anthropic.com": upstream.url}, ca.cert_path, ca_directory=tmp_path / "ca")
    got = []
    with recording(cassette, listening, intercept=InterceptPlan(chaos)) as proxy:
        trust = ssl.create_default_context(cafile=proxy.environment["SSL_CERT_FILE"])
        with httpx.Client(proxy=proxy.url, verify=trust, timeout=10) as client:
            for _ in range(requests):
                started = time.monotonic()
                data = b""
                try:
                    with client.stream(
                        "POST", "https://api.anthropic.com/v1/messages", json=REQUEST, headers=HEADERS
                    ) as response:
                        status = response.status_code
                        for piece in response.iter_raw():
                            data += piece
                except httpx.RemoteProtocolError:
                    pass  # the connection dropped mid-answer: what arrived is what the client got
                got.append((status, data, time.monotonic() - started))
    return proxy, got, load_cassette(cassette)


def rules(**profile: Any) -> ChaosFile:
    return ChaosFile(seed=1, rules=(Rule(name="test", chaos=ChaosProfile.model_validate(profile)),))


def test_a_live_stream_is_cut_after_n_events_and_the_cassette_keeps_what_arrived(
    tmp_path: Path, upstream: LoopbackServer, upstream_ca: UpstreamCA
) -> None:
    upstream.queue(stream_reply(interval=0.01))
    proxy, [(status, data, _)], cassette = run(tmp_path, upstream, upstream_ca, rules(truncateAfterEvents=3))
    assert status == 200
    assert data == b"".join(EVENTS[:3])
    (exchange,) = cassette.exchanges
    assert exchange.response is not None
    assert b"".join(event_bytes(event) for event in exchange.response.events or []) == data
    assert [(i.kind, i.rule) for i in exchange.injected] == [("truncate", "test")]
    assert "injected 1 fault (truncate 1)" in proxy.summary


def test_a_live_fraction_cuts_just_before_the_last_event(
    tmp_path: Path, upstream: LoopbackServer, upstream_ca: UpstreamCA
) -> None:
    upstream.queue(stream_reply(interval=0.01))
    _, [(_, data, _)], _ = run(tmp_path, upstream, upstream_ca, rules(truncateAtFraction=0.5))
    assert data == b"".join(EVENTS[:-1])  # message_stop never arrives


def test_a_corrupt_event_goes_into_a_live_stream(
    tmp_path: Path, upstream: LoopbackServer, upstream_ca: UpstreamCA
) -> None:
    upstream.queue(stream_reply())
    _, [(_, data, _)], cassette = run(tmp_path, upstream, upstream_ca, rules(malformedSse=True, malformedAfterEvents=2))
    events = data.split(b"\n\n")[:-1]
    assert len(events) == len(EVENTS) + 1
    broken = events[2].split(b"data: ", 1)[1]
    with pytest.raises(json.JSONDecodeError):
        json.loads(broken)
    assert [i.kind for i in cassette.exchanges[0].injected] == ["malformed"]


def test_an_injected_error_is_answered_in_the_upstreams_place_and_recorded(
    tmp_path: Path, upstream: LoopbackServer, upstream_ca: UpstreamCA
) -> None:
    upstream.queue(stream_reply())
    chaos = rules(errorStatus=529, failRequestCount=1, retryAfter="0.1")
    proxy, got, cassette = run(tmp_path, upstream, upstream_ca, chaos, requests=2)
    assert [status for status, _, _ in got] == [529, 200]
    assert len(upstream.received) == 1  # the fault never reached the upstream
    faulted, answered = cassette.exchanges
    assert faulted.response is not None
    assert faulted.response.status == 529
    assert [(i.kind, i.status, i.retry_after_s) for i in faulted.injected] == [("error", 529, 0.1)]
    assert answered.injected == []
    assert "error: status 529 (test) on POST api.anthropic.com/v1/messages: retried after" in proxy.summary


def test_latency_holds_a_live_request_back(tmp_path: Path, upstream: LoopbackServer, upstream_ca: UpstreamCA) -> None:
    upstream.queue(stream_reply(), stream_reply())
    _, [(_, _, slow), (_, _, fast)], _ = run(
        tmp_path, upstream, upstream_ca, rules(latency={"fixedMs": 400}, failRequestCount=1), 2
    )
    assert slow >= 0.4
    assert fast < 0.4


def test_the_budget_is_spent_by_real_answers_and_then_refuses(
    tmp_path: Path, upstream: LoopbackServer, upstream_ca: UpstreamCA
) -> None:
    upstream.queue(stream_reply())
    chaos = ChaosFile(budgetUsd=Decimal("0.01"))  # one answer: 1000 + 1000 tokens of claude-sonnet-4-5 = $0.018
    proxy, got, cassette = run(tmp_path, upstream, upstream_ca, chaos, requests=2)
    assert [status for status, _, _ in got] == [200, 429]
    refused = json.loads(got[1][1])
    assert refused["error"]["message"] == "llmproxy budget exhausted: $0.0180 spent of the $0.01 budget"
    assert cassette.exchanges[1].injected[0].kind == "budget"
    assert "budget: $0.0180 spent of the $0.01 budget" in proxy.summary


def test_a_requests_own_chaos_header_applies_to_it_and_never_reaches_the_upstream(
    tmp_path: Path, upstream: LoopbackServer, upstream_ca: UpstreamCA
) -> None:
    upstream.queue(stream_reply(interval=0.01), stream_reply())
    listening = Listening({"api.anthropic.com": upstream.url}, upstream_ca.cert_path, ca_directory=tmp_path / "ca")
    with recording(tmp_path / "run.json", listening, intercept=InterceptPlan(ChaosFile())) as proxy:
        trust = ssl.create_default_context(cafile=proxy.environment["SSL_CERT_FILE"])
        with httpx.Client(proxy=proxy.url, verify=trust, timeout=10) as client:
            cut = {**HEADERS, "x-llmproxy-chaos": json.dumps({"truncateAfterEvents": 2})}
            url = "https://api.anthropic.com/v1/messages"
            with (
                pytest.raises(httpx.RemoteProtocolError),
                client.stream("POST", url, json=REQUEST, headers=cut) as cut_off,
            ):
                cut_off.read()
            whole = client.post(url, json=REQUEST, headers=HEADERS).content
    assert whole == b"".join(EVENTS)
    assert len(upstream.received) == 2
    assert all("x-llmproxy-chaos" not in received.headers for received in upstream.received)
    assert [i.kind for i in load_cassette(tmp_path / "run.json").exchanges[0].injected] == ["truncate"]
