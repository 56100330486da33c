"""The committed example cassettes replay offline through real clients, as the README shows."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmproxy.cassette.decode import decode_exchange, exchange_route
from llmproxy.cassette.model import JsonBody
from llmproxy.cassette.store import load_cassette
from llmproxy.mock.usage import estimate_usage
from llmproxy.model import Completion, Usage
from tests.e2e.clis import CLAUDE, CODEX, FINAL_TEXT, GEMINI, OPENCODE, around, cli_env
from tests.e2e.test_codex import codex_env
from tests.e2e.test_opencode import opencode_env
from tests.e2e.test_replay_gemini import gemini_env

ROOT = Path(__file__).resolve().parents[2]
LLMPROXY_REPLAY = [sys.executable, "-m", "llmproxy", "replay", "--cassette"]


def bare_env(tmp_path: Path) -> dict[str, str]:
    """A fresh user: no key, no proxy settings, a new home."""
    (tmp_path / "home").mkdir()
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8"}


def test_the_readme_quickstart_replays_offline(tmp_path: Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "llmproxy",
            "replay",
            "--cassette",
            "cassettes/quickstart.json",
            "--",
            sys.executable,
            "scripts/quickstart.py",
        ],
        cwd=ROOT,
        env=bare_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "replay them offline in CI" in run.stdout
    assert "replayed 1 request: 0 missed, 0 unused" in run.stderr


EXAMPLES = {
    "claude-code-tool-loop.json": (
        CLAUDE,
        lambda root: cli_env(root, ANTHROPIC_API_KEY="sk-ant-any", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1"),
    ),
    "codex-tool-loop.json": (CODEX, lambda root: codex_env(root, "HTTPS provider")),
    "gemini-cli-tool-loop.json": (GEMINI, gemini_env),
    "opencode-tool-loop.json": (OPENCODE, opencode_env),
}


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_committed_coding_cli_session_replays_offline(tmp_path: Path, name: str) -> None:
    """As cassettes/README.md shows: from an empty folder with a fresh home, any key, offline."""
    cli, environment = EXAMPLES[name]
    if cli.binary is None:
        pytest.skip(f"{cli.name} is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    run = around(cli, tmp_path, environment(tmp_path), "replay", "--cassette", str(ROOT / "cassettes" / name))
    assert run.returncode == 0, run.stderr[-3000:]
    assert FINAL_TEXT in run.stdout
    assert "0 missed, 0 unused" in run.stderr


@pytest.mark.e2e
def test_the_committed_codex_websocket_session_replays_offline(tmp_path: Path) -> None:
    """Codex CLI as installed (its model traffic over a WebSocket), replayed from the committed cassette by a
    fresh user in another folder: no key of its own but one to send, no network."""
    if CODEX.binary is None:
        pytest.skip("codex is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    env = bare_env(tmp_path) | {"CODEX_API_KEY": "sk-proj-any"}
    (tmp_path / "project").mkdir()
    run = subprocess.run(
        [
            *LLMPROXY_REPLAY,
            str(ROOT / "cassettes/codex-websocket.json"),
            "--",
            CODEX.binary,
            "-c",
            "analytics.enabled=false",
            *CODEX.argv,
        ],
        cwd=tmp_path / "project",
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert FINAL_TEXT in run.stdout
    assert "0 missed, 0 unused" in run.stderr


RECORDED = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "cassettes").glob("*.json"))
RECORDED.append("cassettes/chaos/recovered.json")  # chaos/gave-up.json holds no answer, only the faults
AGENTS = [name for name in RECORDED if "tool-loop" in name or "websocket" in name]


def answered_calls(name: str) -> list[tuple[dict[str, object], Usage, Usage]]:
    """Each answered chat call of a committed example: its request body, the usage its answer reported, and
    llmproxy's estimate of the request and the answer."""
    calls = []
    for exchange in load_cassette(ROOT / name).exchanges:
        route = exchange_route(exchange)
        if route is None or exchange.response is None or exchange.response.status >= 400:  # 101: a WebSocket
            continue
        decoded = decode_exchange(exchange, route)
        assert decoded.usage is not None, f"{name}: exchange {exchange.id} reported no usage"
        assert isinstance(exchange.request.body, JsonBody)
        body = exchange.request.body.json_
        calls.append((body, decoded.usage, estimate_usage(decoded.conversation, decoded.completion or Completion())))
    return calls


@pytest.mark.parametrize("name", RECORDED)
def test_each_example_reports_the_usage_its_provider_would(name: str) -> None:
    """The examples were recorded against a stand-in for each provider that answers as the provider would:
    the input is the size of the request (llmproxy's estimate), the output the size of the answer, and a
    request that builds on an earlier response (`previous_response_id`) counts that response's input and
    output too."""
    calls = answered_calls(name)
    assert calls
    for body, usage, estimate in calls:
        assert usage.output_tokens == estimate.output_tokens
        if "previous_response_id" in body:  # the input the API reads: that response's, then what was sent
            assert usage.input_tokens >= estimate.input_tokens
        else:
            assert usage.input_tokens == estimate.input_tokens
        assert usage.cache_read_tokens + usage.cache_write_tokens <= usage.input_tokens


@pytest.mark.parametrize("name", AGENTS)
def test_an_agents_later_turns_read_the_prefix_its_first_turn_cached(name: str) -> None:
    """As real coding-agent sessions show: the first call of the session reads nothing, the last reads most
    of its prompt from the cache (the system prompt, the tools and the turns before); Anthropic's (Claude
    Code, opencode) wrote that prefix on the first turn, at the breakpoints the CLI set."""
    calls = [(body, usage) for body, usage, _ in answered_calls(name) if body.get("generate") is not False]
    (first_body, first), *_, (_, last) = [call for call in calls if call[0].get("model") == calls[-1][0].get("model")]
    assert first.cache_read_tokens == 0
    assert last.cache_read_tokens > last.input_tokens / 2
    if "cache_control" in str(first_body):
        assert first.cache_write_tokens > first.input_tokens / 2
