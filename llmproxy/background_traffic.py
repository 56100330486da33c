"""Background traffic: what coding CLIs and agent frameworks send besides their model calls — telemetry,
feature flags and settings, update checks, plugin and MCP registry look-ups, trace uploads, price lists.

It changes every run (fresh ids, timestamps, random paths) and is no part of what a replay tests, so a
strict replay (and the mock) answers it harmlessly when the cassette does not, instead of failing the run:
an upload gets a success, a look-up gets a 404 — what the client copes with offline, since every one of
them runs without network. `--strict-background` makes these misses like any other. The catalogue is the
documented list (docs/replay.md); a request is recognised by host and path alone.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

import orjson


@dataclass(frozen=True, slots=True)
class HarmlessAnswer:
    status: int
    body: bytes
    content_type: str = "application/json"


UPLOADED: Final = HarmlessAnswer(200, b"{}")  # a telemetry or trace upload: accepted
NOT_FOUND: Final = HarmlessAnswer(404, orjson.dumps({"error": "not found (llmproxy replay: background traffic)"}))


@dataclass(frozen=True, slots=True)
class Background:
    client: str  # who sends it
    what: str  # what it is, as the summary names it
    host: str  # the host, or ".suffix" for any of its subdomains
    path: re.Pattern[str]  # matched at the start of the path (without the query)
    answer: HarmlessAnswer = NOT_FOUND

    def covers(self, host: str, path: str) -> bool:
        host_matches = host.endswith(self.host) if self.host.startswith(".") else host == self.host
        return host_matches and self.path.match(path) is not None


def _entry(client: str, what: str, host: str, path: str, answer: HarmlessAnswer = NOT_FOUND) -> Background:
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
    # opencode
    _entry("opencode", "model catalogue", "models.opencode.ai", r"/"),
    _entry("opencode", "model catalogue", "models.dev", r"/"),
    # npm: the CLIs' update checks (Gemini CLI, Claude Code) and opencode's plugin installs
    _entry("npm", "registry look-up", "registry.npmjs.org", r"/"),
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


def background(host: str, path: str) -> Background | None:
    """The catalogue entry this request is, if any (`path` may carry a query)."""
    host = host.lower().rstrip(".")
    bare = path.split("?", 1)[0]
    return next((entry for entry in CATALOGUE if entry.covers(host, bare)), None)


def background_url(url: str) -> Background | None:
    """The catalogue entry a recorded request's URL is, if any."""
    parts = urlsplit(url)
    return background(parts.hostname or "", parts.path)
