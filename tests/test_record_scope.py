"""What `llmproxy record` keeps: provider hosts whatever the path, LLM paths on any host, what the user adds."""

import pytest

from llmproxy.record_scope import RecordScope


@pytest.mark.parametrize(
    ("host", "path", "kept"),
    [
        ("api.anthropic.com", "/v1/organizations/usage", True),  # a provider host: every path
        ("API.Anthropic.com.", "/anything", True),
        ("bedrock-runtime.us-east-1.amazonaws.com", "/guardrail/g/version/1/apply", True),
        ("vpce-0a1b.bedrock-runtime.us-east-1.vpce.amazonaws.com", "/x", True),  # a VPC endpoint
        ("gw.example.com", "/anthropic/v1/messages", True),  # an LLM path on any host
        ("127.0.0.1", "/api/chat", True),  # a local Ollama: its path says so
        ("localhost", "/health", False),  # but loopback is not an LLM host
        ("127.0.0.1", "/v1/tools", False),
        ("example.com", "/index.html", False),
        ("statsig.anthropic.com.evil.example", "/", False),
    ],
)
def test_default_scope(host: str, path: str, kept: bool) -> None:
    assert RecordScope.of().includes(host, path, {}, "POST") is kept


def test_user_hosts_and_everything() -> None:
    scope = RecordScope.of(["MCP.internal."])
    assert scope.includes("mcp.internal", "/mcp", {}, "POST")
    assert not scope.includes("other.internal", "/mcp", {}, "POST")
    assert RecordScope.of(everything=True).includes("example.com", "/index.html", {}, "GET")


def test_a_background_host_is_never_recorded_whatever_else_says_so() -> None:
    """`--background-host`: its requests are background traffic, not model exchanges: not even `--record-all`
    or `--record-host` records them."""
    for scope in (
        RecordScope.of(background=["api.anthropic.com"]),
        RecordScope.of(["api.anthropic.com"], everything=True, background=["api.anthropic.com"]),
    ):
        assert not scope.includes("api.anthropic.com", "/api/telemetry", {}, "POST")
        assert not scope.covers("API.anthropic.com.")
    assert RecordScope.of(background=["telemetry.example"]).includes("api.anthropic.com", "/v1/messages", {}, "POST")
