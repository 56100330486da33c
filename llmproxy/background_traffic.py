"""Background traffic: what coding CLIs and agent frameworks send besides their model calls — telemetry,
feature flags and settings, update checks, plugin and MCP registry look-ups, trace uploads, price lists.

It changes every run (fresh ids, timestamps, random paths) and is no part of what a replay tests, so a
strict replay (and the mock) answers it harmlessly when the cassette does not, instead of failing the run:
an upload gets a success, a look-up a 404 — what the client copes with offline, since every one of them
runs without network. `--strict-background` makes these misses like any other. A request is recognised by
host and path alone (docs/replay.md#background-traffic), three ways, in order:

* the catalogue: what the known clients send, by host and path;
* the hosts the user names (`--background-host`), every request to them;
* the shapes of the analytics and telemetry protocols every vendor's SDK speaks, on any host (PostHog,
  OpenTelemetry's OTLP/HTTP, Segment, Sentry envelopes, RUM beacons, feature-flag services) — so a CLI nobody
  listed is covered too. A shape never claims an LLM API call (a request whose route is known), nor does a
  named host.
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

import orjson

from llmproxy.errors import UsageError


@dataclass(frozen=True, slots=True)
class HarmlessAnswer:
    status: int
    body: bytes
    content_type: str = "application/json"


UPLOADED: Final = HarmlessAnswer(200, b"{}")  # a telemetry or trace upload: accepted
PROTOBUF_UPLOADED: Final = HarmlessAnswer(200, b"", "application/x-protobuf")  # an OTLP/protobuf export: accepted
NOT_FOUND: Final = HarmlessAnswer(404, orjson.dumps({"error": "not found (llmproxy replay: background traffic)"}))


@dataclass(frozen=True, slots=True)
class Background:
    client: str  # who sends it (for a shape: the protocol)
    what: str  # what it is, as the summary names it
    host: str | None  # the host, ".suffix" for any of its subdomains, None for any host (a shape)
    path: re.Pattern[str]  # matched at the start of the path (without the query)
    answer: HarmlessAnswer = NOT_FOUND

    def covers(self, host: str, path: str) -> bool:
        if self.host is None:
            host_matches = True
        else:
            host_matches = host.endswith(self.host) if self.host.startswith(".") else host == self.host
        return host_matches and self.path.match(path) is not None

    def answering(self, content_type: str) -> HarmlessAnswer:
        """The answer for a request of `content_type`: an upload sent as protobuf (OTLP) is accepted as protobuf."""
        if self.answer == UPLOADED and "protobuf" in content_type.lower():
            return PROTOBUF_UPLOADED
        return self.answer


def _entry(client: str, what: str, host: str | None, path: str, answer: HarmlessAnswer = NOT_FOUND) -> Background:
    return Background(client, what, host, re.compile(path), answer)


_ANTHROPIC = "api.anthropic.com"
CATALOGUE: Final[Sequence[Background]] = (
    # Claude Code (without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 for most of them)
    _entry("Claude Code", "settings", _ANTHROPIC, r"/api/claude_code/settings\b"),
    _entry("Claude Code", "policy limits", _ANTHROPIC, r"/api/claude_code/policy_limits\b"),
    _entry("Claude Code", "metrics setting", _ANTHROPIC, r"/api/claude_code/organizations/metrics_enabled\b"),
    _entry("Claude Code", "feature flags", _ANTHROPIC, r"/api/claude_code_penguin_mode\b"),
    _entry("Claude Code", "bootstrap", _ANTHROPIC, r"/api/claude_cli/bootstrap\b"),
    _entry("Claude Code", "feature flags", _ANTHROPIC, r"/api/eval/sdk-"),
    _entry("Claude Code", "MCP directory", _ANTHROPIC, r"/api/directory/"),
    _entry("Claude Code", "telemetry", _ANTHROPIC, r"/api/event_logging/", UPLOADED),
    _entry("Claude Code", "feature flags", "statsig.anthropic.com", r"/"),
    # Codex CLI
    _entry("Codex", "model catalogue", "chatgpt.com", r"/backend-api/codex/models\b"),
    _entry("Codex", "plugins", "chatgpt.com", r"/backend-api/plugins/"),
    _entry("Codex", "plugins", "api.github.com", r"/repos/openai/plugins\b"),
    _entry("Codex", "update check", "api.github.com", r"/repos/openai/codex/releases\b"),
    _entry("Codex", "metrics", "ab.chatgpt.com", r"/otlp/", HarmlessAnswer(200, b"", "application/x-protobuf")),
    # Gemini CLI
    _entry("Gemini CLI", "usage statistics", "play.googleapis.com", r"/log\b", HarmlessAnswer(200, b"[]")),
    _entry("Gemini CLI", "account look-up", "www.googleapis.com", r"/oauth2/v\d+/userinfo\b"),
    _entry("Gemini CLI", "metrics", "cloudcode-pa.googleapis.com", r"/v1internal:recordCodeAssistMetrics\b", UPLOADED),
    # GitHub Copilot CLI (its update check, made even with --no-auto-update)
    _entry("GitHub Copilot CLI", "update check", "api.github.com", r"/repos/github/copilot-cli/releases\b"),
    # Kilo CLI: its gateway's model catalogue, fetched whatever the provider
    _entry("Kilo CLI", "model catalogue", "api.kilo.ai", r"/api/(openrouter/)?models\b"),
    # Continue's cn: what it knows of its own version
    _entry("Continue cn", "version check", "api.continue.dev", r"/cn/info\b"),
    # Cline's CLI: its recommended models, asked of its own gateway whatever the provider
    _entry("Cline", "model catalogue", "api.cline.bot", r"/api/v1/ai/cline/recommended-models\b"),
    # Qwen Code: Alibaba Cloud's real-user monitoring (ARMS RUM), its usage statistics
    _entry("Alibaba Cloud RUM", "beacons", ".rum.aliyuncs.com", r"/", UPLOADED),
    # opencode
    _entry("opencode", "model catalogue", "models.opencode.ai", r"/"),
    _entry("opencode", "model catalogue", "models.dev", r"/"),
    # npm: the CLIs' update checks (Gemini CLI, Claude Code) and opencode's plugin installs
    _entry("npm", "registry look-up", "registry.npmjs.org", r"/"),
    # PyPI's JSON API: the Python CLIs' update checks (aider)
    _entry("PyPI", "version check", "pypi.org", r"/pypi/[^/]+/json\b"),
    # agent frameworks
    _entry("openai-agents", "trace upload", "api.openai.com", r"/v1/traces/ingest\b", UPLOADED),
    _entry("LangSmith", "trace upload", "api.smith.langchain.com", r"/runs\b", UPLOADED),
    _entry(
        "litellm",
        "price list",
        "raw.githubusercontent.com",
        r"/BerriAI/litellm/[^/]+/model_prices_and_context_window\.json",
    ),
    _entry("Sentry clients", "error reports", ".ingest.sentry.io", r"/api/", UPLOADED),
)


SHAPES: Final[Sequence[Background]] = (
    # PostHog: events (`/batch/`, `/capture/`, `/e/`, `/i/v0/e/`), session recordings (`/s/`), flags
    _entry("PostHog", "analytics", None, r"/(batch|capture|e|i/v0/e|s)/?$", UPLOADED),
    _entry("PostHog", "feature flags", None, r"/(decide|flags)/?$", UPLOADED),
    # OpenTelemetry's OTLP/HTTP exports, under any prefix (`/otlp/v1/metrics`, `/v1/traces`)
    _entry("OpenTelemetry", "telemetry", None, r"(/[^/]+)*/v1/(logs|traces|metrics)/?$", UPLOADED),
    # Segment's tracking API (and its clones: RudderStack, Jitsu)
    _entry("Segment", "analytics", None, r"/v1/(batch|track|identify|page|screen|group|alias)/?$", UPLOADED),
    # Sentry's envelopes and events, self-hosted or not
    _entry("Sentry", "error reports", None, r"/api/\d+/(envelope|store|minidump|security)/", UPLOADED),
    # real-user-monitoring beacons (Datadog's browser intake)
    _entry("RUM", "beacons", None, r"/api/v2/(rum|replay|logs)/?$", UPLOADED),
    # feature-flag services: Statsig, LaunchDarkly, GrowthBook, Unleash
    _entry("Statsig", "feature flags", None, r"/v1/(initialize|rgstr|log_event|get_config|check_gate)/?$", UPLOADED),
    _entry("LaunchDarkly", "feature flags", None, r"/(sdk/(evalx|latest-all|goals)|msdk/evalx|meval)/"),
    _entry("LaunchDarkly", "events", None, r"/(bulk|diagnostic|mobile)/?$", UPLOADED),
    _entry("GrowthBook", "feature flags", None, r"/api/features/"),
    _entry("Unleash", "feature flags", None, r"/api/client/(features|metrics|register)\b"),
    # account look-ups an LLM vendor's CLI makes on the model host (its OAuth profile, roles, usage)
    _entry("account", "look-up", None, r"/api/oauth/(profile|account|usage|claude_cli/roles)\b"),
)
"""The analytics and telemetry protocols by their shape, on any host: what a CLI nobody listed sends."""


@dataclass(frozen=True, slots=True)
class BackgroundTraffic:
    """The recogniser: the catalogue, the hosts the user names (`--background-host`: every request to them),
    then the shapes. Pure and cheap: a request is checked against some thirty patterns at most."""

    hosts: frozenset[str] = frozenset()

    @classmethod
    def of(cls, hosts: Iterable[str] = ()) -> "BackgroundTraffic":
        """Raises UsageError for a value that is not a host name (`--background-host`)."""
        named = set()
        for given in hosts:
            host = given.strip().lower().rstrip(".")
            if not _HOST.fullmatch(host):
                raise UsageError(f"--background-host expects a host name such as telemetry.example.com, got {given!r}")
            named.add(host)
        return cls(frozenset(named))

    def recognise(self, host: str, path: str, *, llm_api: bool = False, method: str = "POST") -> Background | None:
        """What this request is, if background traffic (`path` may carry a query); `llm_api`: whether it is a
        call to an LLM API, which only a catalogue entry may claim (an entry names one exact endpoint)."""
        host = host.lower().rstrip(".")
        bare = path.split("?", 1)[0]
        entry = next((entry for entry in CATALOGUE if entry.covers(host, bare)), None)
        if entry is not None or llm_api:
            return entry
        if host in self.hosts:
            uploads = method.upper() in ("POST", "PUT", "PATCH")
            return Background(host, "(--background-host)", host, _ANY_PATH, UPLOADED if uploads else NOT_FOUND)
        return next((shape for shape in SHAPES if shape.covers(host, bare)), None)

    def recognise_url(self, url: str, *, llm_api: bool = False) -> Background | None:
        """What a recorded request's URL is, if background traffic."""
        parts = urlsplit(url)
        return self.recognise(parts.hostname or "", parts.path, llm_api=llm_api)


_HOST = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")
_ANY_PATH = re.compile("")
KNOWN: Final = BackgroundTraffic()  # the catalogue and the shapes, no host named


def background(host: str, path: str, *, llm_api: bool = False) -> Background | None:
    """What this request is, if background traffic by the catalogue or its shape (`path` may carry a query)."""
    return KNOWN.recognise(host, path, llm_api=llm_api)


def background_url(url: str, *, llm_api: bool = False) -> Background | None:
    """What a recorded request's URL is, if background traffic by the catalogue or its shape."""
    return KNOWN.recognise_url(url, llm_api=llm_api)
