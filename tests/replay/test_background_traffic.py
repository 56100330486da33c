"""Background traffic in strict replay: what the coding CLIs send besides their model calls is answered
harmlessly when the cassette lacks it (and served from the cassette when it has it), named in the summary,
left out of "unused", and a miss like any other with `strict_background`."""

import json
import ssl
from pathlib import Path

import httpx2 as httpx
import pytest

from llmproxy.background_traffic import CATALOGUE, background
from llmproxy.session import Listening, recording, replaying
from tests.conformance.server import LoopbackServer, Reply
from tests.replay.test_replay_rules import JSON, answer, ask, record

TELEMETRY = "https://api.anthropic.com/api/event_logging/v2/batch"
SETTINGS = "https://api.anthropic.com/api/claude_code/settings"

# what each entry looks like on the wire, as the clients send it
SEEN = {
    ("Claude Code", "telemetry"): (TELEMETRY, "POST"),
    ("Codex", "metrics"): ("https://ab.chatgpt.com/otlp/v1/metrics", "POST"),
    ("Gemini CLI", "usage statistics"): ("https://play.googleapis.com/log?format=json&hasfast=true", "POST"),
    ("opencode", "model catalogue"): ("https://models.opencode.ai/api.json", "GET"),
    ("npm", "registry look-up"): ("https://registry.npmjs.org/@opencode-ai%2fplugin", "GET"),
    ("openai-agents", "trace upload"): ("https://api.openai.com/v1/traces/ingest", "POST"),
    ("litellm", "price list"): (
        "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json",
        "GET",
    ),
}
MODEL_CALLS = [
    "https://api.anthropic.com/v1/messages?beta=true",
    "https://api.openai.com/v1/responses",
    "https://api.openai.com/v1/chat/completions",
    "https://chatgpt.com/backend-api/codex/responses",
    "https://cloudcode-pa.googleapis.com/v1internal:streamGenerateContent?alt=sse",
    "https://cloudcode-pa.googleapis.com/v1internal:loadCodeAssist",
    "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
]


@pytest.mark.parametrize(("client", "what"), sorted(SEEN))
def test_the_clients_background_requests_are_recognised(client: str, what: str) -> None:
    url, _ = SEEN[client, what]
    host, _, path = url.removeprefix("https://").partition("/")
    entry = background(host, "/" + path)
    assert entry is not None
    assert (entry.client, entry.what) == (client, what)


@pytest.mark.parametrize("url", MODEL_CALLS)
def test_model_calls_and_set_up_calls_never_are(url: str) -> None:
    host, _, path = url.removeprefix("https://").partition("/")
    assert background(host, "/" + path) is None


def test_uploads_succeed_and_look_ups_find_nothing() -> None:
    for entry in CATALOGUE:
        assert entry.answer.status in (200, 404), entry
        if entry.answer.status == 200 and entry.answer.content_type == "application/json":
            json.loads(entry.answer.body)


def trusting(ca: Path | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca))


def test_strict_replay_answers_background_traffic_harmlessly(tmp_path: Path, loopback: LoopbackServer) -> None:
    cassette, _ = record(tmp_path, loopback, Reply(200, JSON, answer("recorded")))
    listening = Listening(ca_directory=tmp_path / "ca")
    with (
        replaying(cassette, listening=listening, timing=None) as proxy,
        httpx.Client(proxy=proxy.url, verify=trusting(proxy.ca_cert)) as client,
    ):
        uploaded = client.post(TELEMETRY, json={"events": [{"event_id": "a-fresh-id"}]})
        settings = client.get(SETTINGS)
        assert ask(loopback.url, proxy.url).json()["content"][0]["text"] == "recorded"
    assert (uploaded.status_code, uploaded.json()) == (200, {})
    assert settings.status_code == 404
    assert proxy.misses == []
    assert "answered 2 background requests harmlessly: Claude Code telemetry, Claude Code settings" in proxy.summary
    assert len(loopback.received) == 1  # the recording: nothing was sent on


def test_strict_background_makes_them_misses(tmp_path: Path, loopback: LoopbackServer) -> None:
    cassette, _ = record(tmp_path, loopback, Reply(200, JSON, answer("recorded")))
    listening = Listening(ca_directory=tmp_path / "ca")
    with (
        replaying(cassette, listening=listening, timing=None, strict_background=True) as proxy,
        httpx.Client(proxy=proxy.url, verify=trusting(proxy.ca_cert)) as client,
    ):
        missed = client.post(TELEMETRY, json={"events": []})
    assert missed.status_code == 404  # no LLM API: not found
    assert [miss.request for miss in proxy.misses] == [f"POST {TELEMETRY}"]


def test_recorded_background_traffic_is_served_and_never_counted_unused(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    cassette = tmp_path / "c.json"
    listening = Listening(mapping={"api.anthropic.com": loopback.url}, ca_directory=tmp_path / "ca")
    loopback.queue(Reply(200, JSON, b'{"managed": true}'))
    loopback.queue(Reply(200, JSON, b"{}"))
    with (
        recording(cassette, listening) as proxy,
        httpx.Client(proxy=proxy.url, verify=trusting(proxy.ca_cert)) as client,
    ):
        client.get(SETTINGS)
        client.post(TELEMETRY, json={"events": [{"event_id": "first-run"}]})
    with (
        replaying(cassette, listening=listening, timing=None) as proxy,
        httpx.Client(proxy=proxy.url, verify=trusting(proxy.ca_cert)) as client,
    ):
        settings = client.get(SETTINGS)
        client.post(TELEMETRY, json={"events": [{"event_id": "second-run"}]})
    assert settings.json() == {"managed": True}  # as recorded, not the harmless 404
    assert proxy.misses == []
    assert proxy.unused == []  # the first run's telemetry was never served: its ids change every run
    assert "answered 1 background requests harmlessly: Claude Code telemetry" in proxy.summary
