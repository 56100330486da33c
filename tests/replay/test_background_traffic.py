"""Background traffic in strict replay: what the coding CLIs send besides their model calls is answered
harmlessly when the cassette lacks it (and served from the cassette when it has it), named in the summary,
left out of "unused", and a miss like any other with `strict_background`."""

import json
import ssl
from pathlib import Path

import httpx2 as httpx
import pytest

from llmproxy.background_traffic import CATALOGUE, SHAPES, BackgroundTraffic, background
from llmproxy.errors import UsageError
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
    ("Alibaba Cloud RUM", "beacons"): ("https://gb4w8c3ygj-default-sea.rum.aliyuncs.com/", "POST"),
    ("Continue cn", "version check"): ("https://api.continue.dev/cn/info?id=0035969ec53f6e7f", "GET"),
    ("Cline", "model catalogue"): ("https://api.cline.bot/api/v1/ai/cline/recommended-models", "GET"),
    ("Kilo CLI", "model catalogue"): ("https://api.kilo.ai/api/openrouter/models", "GET"),
    ("GitHub Copilot CLI", "update check"): (
        "https://api.github.com/repos/github/copilot-cli/releases?per_page=100",
        "GET",
    ),
    ("npm", "registry look-up"): ("https://registry.npmjs.org/@opencode-ai%2fplugin", "GET"),
    ("PyPI", "version check"): ("https://pypi.org/pypi/aider-chat/json", "GET"),
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


# what CLIs nobody listed send, as seen on the wire: known by the protocol's shape, on any host
BY_SHAPE = {
    "https://us.i.posthog.com/batch/": ("PostHog", "analytics"),
    "https://eu.i.posthog.com/i/v0/e/?ip=1&_=1732800000000": ("PostHog", "analytics"),
    "https://app.posthog.com/decide/?v=3": ("PostHog", "feature flags"),
    "https://otel.vendor.example/v1/logs": ("OpenTelemetry", "telemetry"),
    "https://telemetry.vendor.example/otlp/v1/traces": ("OpenTelemetry", "telemetry"),
    "https://api.segment.io/v1/batch": ("Segment", "analytics"),
    "https://o4507.ingest.us.sentry.io/api/4507123/envelope/?sentry_key=abc": ("Sentry", "error reports"),
    "https://browser-intake-datadoghq.com/api/v2/rum?ddsource=browser": ("RUM", "beacons"),
    "https://featuregates.org/v1/initialize": ("Statsig", "feature flags"),
    "https://clientsdk.launchdarkly.com/sdk/evalx/abc/contexts/xyz": ("LaunchDarkly", "feature flags"),
    "https://api.anthropic.com/api/oauth/profile": ("account", "look-up"),
}


@pytest.mark.parametrize("url", sorted(BY_SHAPE))
def test_telemetry_of_clients_nobody_listed_is_known_by_its_shape(url: str) -> None:
    host, _, path = url.removeprefix("https://").partition("/")
    entry = background(host, "/" + path)
    assert entry is not None
    assert (entry.client, entry.what) == BY_SHAPE[url]
    assert background(host, "/" + path, llm_api=True) is None  # a shape never claims an LLM API call


@pytest.mark.parametrize(
    "url",
    [
        *MODEL_CALLS,
        "https://api.anthropic.com/v1/messages/batches",
        "https://api.openai.com/v1/batches",
        "https://api.mistral.ai/v1/batch/jobs",
        "https://api.openai.com/v1/models",
        "https://api.github.com/repos/o/r/issues",
    ],
)
def test_no_shape_takes_an_api_call(url: str) -> None:
    host, _, path = url.removeprefix("https://").partition("/")
    assert background(host, "/" + path) is None


def test_a_named_host_is_background_whatever_the_path_but_never_an_llm_call() -> None:
    traffic = BackgroundTraffic.of(["Telemetry.Vendor.Example."])
    upload = traffic.recognise("telemetry.vendor.example", "/ingest/v7?x=1", method="POST")
    look_up = traffic.recognise("telemetry.vendor.example", "/config", method="GET")
    assert upload is not None
    assert look_up is not None
    assert (upload.answer.status, look_up.answer.status) == (200, 404)
    assert traffic.recognise("telemetry.vendor.example", "/v1/chat/completions", llm_api=True) is None
    assert background("telemetry.vendor.example", "/ingest/v7") is None  # only where it is named


@pytest.mark.parametrize("value", ["https://telemetry.example", "telemetry.example:443", "", "a b"])
def test_a_background_host_that_is_no_host_name_is_a_usage_error(value: str) -> None:
    with pytest.raises(UsageError, match="--background-host expects a host name"):
        BackgroundTraffic.of([value])


def test_an_otlp_export_in_protobuf_is_accepted_in_protobuf() -> None:
    entry = background("otel.vendor.example", "/v1/metrics")
    assert entry is not None
    assert entry.answering("application/x-protobuf").content_type == "application/x-protobuf"
    assert entry.answering("application/json").body == b"{}"


def test_uploads_succeed_and_look_ups_find_nothing() -> None:
    for entry in (*CATALOGUE, *SHAPES):
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


POSTHOG = "https://us.i.posthog.com/batch/"
VENDOR = "https://telemetry.vendor.example/ingest"
OTHER = "flags.vendor.example"  # a second --background-host: the option adds up


def test_strict_replay_answers_unlisted_telemetry_and_named_hosts_and_compares_it_with_no_model_call(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    """A CLI nobody listed: its PostHog batch and its vendor's own telemetry host (`--background-host`) are
    answered harmlessly and counted apart; with `--strict-background` the miss diagnostic does not set the
    telemetry beside the recorded chat call (host, path, every field different) — there is nothing to compare."""
    cassette, _ = record(tmp_path, loopback, Reply(200, JSON, answer("recorded")))
    listening = Listening(ca_directory=tmp_path / "ca")
    with (
        replaying(
            cassette, listening=listening, timing=None, background_hosts=[OTHER, "telemetry.vendor.example"]
        ) as proxy,
        httpx.Client(proxy=proxy.url, verify=trusting(proxy.ca_cert)) as client,
    ):
        batch = client.post(POSTHOG, json={"batch": [{"event": "started", "uuid": "a-fresh-id"}]})
        vendor = client.post(VENDOR, json={"run": "a-fresh-id"})
        other = client.get(f"https://{OTHER}/config")
        assert ask(loopback.url, proxy.url).json()["content"][0]["text"] == "recorded"
    assert (batch.status_code, batch.json(), vendor.status_code, other.status_code) == (200, {}, 200, 404)
    assert proxy.misses == []
    assert "answered 3 background requests harmlessly: PostHog analytics, telemetry.vendor.example" in proxy.summary
    with (
        replaying(cassette, listening=listening, timing=None, strict_background=True) as proxy,
        httpx.Client(proxy=proxy.url, verify=trusting(proxy.ca_cert)) as client,
    ):
        client.post(POSTHOG, json={"batch": []})
    (miss,) = proxy.misses
    assert "closest" not in miss.explain()
    assert "host: recorded" not in miss.explain()
