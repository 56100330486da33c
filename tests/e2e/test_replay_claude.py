"""The real Claude Code CLI, recorded through `llmproxy record` against a local upstream, then replayed
offline with the upstream stopped: the same final answer, also from differently named folders and fresh homes
(new session ids, other paths in the system prompt), thanks to the claude-code preset chosen from its
User-Agent. It runs as people run it, with its background traffic on (settings, feature flags, telemetry to
api.anthropic.com, fresh ids every run): replay answers what the cassette lacks of it harmlessly."""

import secrets
from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.e2e.clis import (
    CLAUDE,
    FINAL_TEXT,
    around,
    assert_missed_fast,
    cli_env,
    record_scripted,
    replay_changed_prompt,
)


def claude_env(root: Path, key: str, **variables: str) -> dict[str, str]:
    return cli_env(root, ANTHROPIC_API_KEY=key, **variables)


@pytest.mark.e2e
def test_claude_code_session_replays_offline_run_after_run(tmp_path: Path) -> None:
    if CLAUDE.binary is None:
        pytest.skip("claude is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    key = "sk-ant-api03-" + secrets.token_urlsafe(60)
    env = claude_env(tmp_path / "record", key)
    recorded, cassette, upstream = record_scripted(CLAUDE, tmp_path, "api.anthropic.com", env)
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert FINAL_TEXT in recorded.stdout
    assert len(upstream.bodies) == 2
    messages = [e for e in load_cassette(cassette).exchanges if e.operation == "messages"]
    assert len(messages) == 2

    for folder in ("checkout", "another-project"):  # a new session, folder name and home each time
        root = tmp_path / folder
        env = claude_env(root, "sk-ant-api03-" + secrets.token_urlsafe(60))
        replayed = around(CLAUDE, root, env, "replay", "--cassette", str(cassette), folder=folder)
        assert replayed.returncode == 0, replayed.stderr[-3000:]
        assert FINAL_TEXT in replayed.stdout
        assert "0 missed, 0 unused" in replayed.stderr
        assert "background requests harmlessly: Claude Code" in replayed.stderr

    # a deliberate miss ends Claude Code at once (not after minutes of retries), with the diagnostic
    root = tmp_path / "miss"
    assert_missed_fast(replay_changed_prompt(CLAUDE, root, claude_env(root, key), cassette))
