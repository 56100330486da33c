"""Replay's rules, each recorded through the proxy from a loopback upstream and served back by the in-process
API: identical requests in recorded order and what happens when they run out; recorded errors and failed
connections as recorded; the recorded headers apart from hop-by-hop ones; hosts outside the cassette answered
locally unless allowed; `--fail-on-unused` failing a run whose command succeeded."""

import json
import subprocess
import sys
from pathlib import Path

import anthropic
import httpx2 as httpx
import pytest

from llmproxy.cassette.replay_index import MatchOptions, OnExhausted
from llmproxy.session import Listening, recording, replaying
from tests.conformance.server import LoopbackServer, Reply

ASK = {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "same question"}]}
HEADERS = {"anthropic-version": "2023-06-01", "x-api-key": "sk-ant-test"}
JSON = {"content-type": "application/json"}


def answer(text: str) -> bytes:
    return json.dumps({"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]}).encode()


def ask(url: str, proxy: str, body: dict[str, object] = ASK) -> httpx.Response:
    return httpx.post(f"{url}/v1/messages", json=body, headers=HEADERS, proxy=proxy, timeout=10)


def record(tmp_path: Path, loopback: LoopbackServer, *replies: Reply) -> tuple[Path, list[httpx.Response]]:
    """A cassette of one request per reply, and what the client got live."""
    cassette = tmp_path / "c.json"
    for reply in replies:
        loopback.queue(reply)
    with recording(cassette, Listening(ca_directory=tmp_path / "ca")) as proxy:
        live = [ask(loopback.url, proxy.url) for _ in replies]
    return cassette, live


@pytest.mark.parametrize(
    ("exhausted", "third"), [(OnExhausted.ERROR, 400), (OnExhausted.REPEAT_LAST, "second")], ids=["error", "repeat"]
)
def test_identical_requests_are_served_in_recorded_order(
    tmp_path: Path, loopback: LoopbackServer, exhausted: OnExhausted, third: object
) -> None:
    cassette, _ = record(tmp_path, loopback, Reply(200, JSON, answer("first")), Reply(200, JSON, answer("second")))
    listening = Listening(ca_directory=tmp_path / "ca")
    with replaying(cassette, listening=listening, timing=None, match=MatchOptions(on_exhausted=exhausted)) as proxy:
        served = [ask(loopback.url, proxy.url) for _ in range(3)]
    texts = [r.json()["content"][0]["text"] if r.status_code == 200 else r.status_code for r in served]
    assert texts == ["first", "second", third]
    assert len(loopback.received) == 2  # only the recording reached the upstream


@pytest.mark.parametrize(("miss_status", "attempts"), [(None, 1), (599, 2)], ids=["default", "599"])
def test_a_miss_ends_the_sdk_at_once_unless_a_retried_status_is_asked_for(
    tmp_path: Path, loopback: LoopbackServer, miss_status: int | None, attempts: int
) -> None:
    cassette, _ = record(tmp_path, loopback, Reply(200, JSON, answer("recorded")))
    listening = Listening(ca_directory=tmp_path / "ca")
    with replaying(cassette, listening=listening, timing=None, miss_status=miss_status) as proxy:
        http = httpx.Client(proxy=proxy.url)
        client = anthropic.Anthropic(api_key="sk-ant-test", base_url=loopback.url, http_client=http, max_retries=1)
        with pytest.raises(anthropic.APIStatusError) as missed:
            client.messages.create(model="claude-haiku-4-5", max_tokens=16, messages=[{"role": "user", "content": "?"}])
        http.close()
    assert missed.value.status_code == (miss_status or 400)
    assert "closest is exchange 1" in missed.value.message
    assert len(proxy.misses) == attempts  # the SDK (max_retries=1) retried the 599 only


def test_recorded_errors_and_failed_connections_replay_as_recorded(
    tmp_path: Path, loopback: LoopbackServer, refusing_port: int
) -> None:
    limited = {"error": {"type": "rate_limit_error", "message": "slow down"}, "type": "error"}
    headers = {**JSON, "retry-after": "7", "anthropic-ratelimit-requests-remaining": "0"}
    cassette, _ = record(tmp_path, loopback, Reply(429, headers, json.dumps(limited).encode()))
    dead = f"http://127.0.0.1:{refusing_port}"  # nothing listens: the connection is refused
    listening = Listening(ca_directory=tmp_path / "ca")
    with recording(cassette, listening, record_unanswered=True) as proxy:  # an outage, recorded on purpose
        refused = ask(dead, proxy.url, {**ASK, "max_tokens": 17})
    assert refused.status_code == 502

    with replaying(cassette, listening=listening, timing=None) as proxy:
        again = ask(loopback.url, proxy.url)
        unreachable = ask(dead, proxy.url, {**ASK, "max_tokens": 17})
    assert (again.status_code, again.json()) == (429, limited)
    assert (again.headers["retry-after"], again.headers["anthropic-ratelimit-requests-remaining"]) == ("7", "0")
    assert unreachable.status_code == 502
    assert "recorded upstream failure" in unreachable.text
    assert proxy.misses == []


def test_a_stream_replays_with_its_recorded_headers_and_bytes(tmp_path: Path, loopback: LoopbackServer) -> None:
    events = [
        b'event: message_start\ndata: {"type":"message_start"}\n\n',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"hi"}}\n\n',
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ]
    headers = {"content-type": "text/event-stream", "request-id": "req_42", "x-custom": "kept", "connection": "close"}
    cassette, (live,) = record(tmp_path, loopback, Reply(200, headers, events=events))
    listening = Listening(ca_directory=tmp_path / "ca")
    with replaying(cassette, listening=listening, timing=None) as proxy:
        replayed = ask(loopback.url, proxy.url)
    assert replayed.content == live.content == b"".join(events)
    hop_by_hop = {"connection", "transfer-encoding", "keep-alive", "content-length"}
    expected = {name: value for name, value in live.headers.items() if name not in hop_by_hop}
    assert {name: value for name, value in replayed.headers.items() if name not in hop_by_hop} == expected
    assert expected["x-custom"] == "kept"


def test_hosts_outside_the_cassette_are_answered_locally_unless_allowed(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    cassette, _ = record(tmp_path, loopback, Reply(200, JSON, answer("recorded")))
    listening = Listening(ca_directory=tmp_path / "ca")
    with replaying(cassette, listening=listening, timing=None) as proxy:
        health = httpx.get(f"{loopback.url}/health", proxy=proxy.url, timeout=10)
    assert health.status_code == 404  # not an LLM API: not found
    assert len(loopback.received) == 1  # the recording only: strict replay sent nothing on

    loopback.queue(Reply(200, {"content-type": "text/plain"}, b"ok"))
    with replaying(cassette, listening=listening, timing=None, allow_hosts=["127.0.0.1"]) as proxy:
        health = httpx.get(f"{loopback.url}/health", proxy=proxy.url, timeout=10)
        recorded = ask(loopback.url, proxy.url)
    assert (health.status_code, health.text) == (200, "ok")
    assert recorded.json()["content"][0]["text"] == "recorded"  # the cassette still answers what it holds
    assert [r.path for r in loopback.received] == ["/v1/messages", "/health"]


def test_fail_on_unused_fails_a_run_whose_command_succeeded(tmp_path: Path, loopback: LoopbackServer) -> None:
    used, unused = Reply(200, JSON, answer("used")), Reply(200, JSON, answer("never asked"))
    cassette, _ = record(tmp_path, loopback, used, unused)
    client = (
        "import httpx2 as httpx, os, sys\n"
        f"r = httpx.post('{loopback.url}/v1/messages', json={ASK!r}, headers={HEADERS!r},"
        " proxy=os.environ['HTTP_PROXY'])\n"
        "sys.exit(r.status_code != 200)\n"
    )
    command = [sys.executable, "-m", "llmproxy", "replay", "--cassette", str(cassette), "--timing", "instant"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LLMPROXY_HOME": str(tmp_path / "ca")}
    lenient = subprocess.run([*command, "--", sys.executable, "-c", client], env=env, capture_output=True, text=True)
    strict = subprocess.run(
        [*command, "--fail-on-unused", "--", sys.executable, "-c", client], env=env, capture_output=True, text=True
    )
    assert lenient.returncode == 0, lenient.stderr
    assert "replayed 1 request: 0 missed, 1 unused" in lenient.stderr
    assert strict.returncode == 1
    assert "1 unused" in strict.stderr
