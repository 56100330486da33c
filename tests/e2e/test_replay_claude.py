"""The real Claude Code CLI, recorded through `llmproxy record` against a local upstream, then replayed
offline with the upstream stopped: the same final answer, also from other directories and homes (new session
ids, other paths in the system prompt), thanks to the claude-code preset chosen from its User-Agent."""

import secrets
from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.e2e.clis import CLAUDE, FINAL_TEXT, around, cli_env, record_scripted


def claude_env(root: Path, key: str) -> dict[str, str]:
    return cli_env(root, ANTHROPIC_API_KEY=key, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")


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
    exchanges = len(load_cassette(cassette).exchanges)

    for attempt in ("first", "second", "third"):  # a new session, directory and home each time
        root = tmp_path / attempt
        env = claude_env(root, "sk-ant-api03-" + secrets.token_urlsafe(60))
        replayed = around(CLAUDE, root, env, "replay", "--cassette", str(cassette))
        assert replayed.returncode == 0, replayed.stderr[-3000:]
        assert FINAL_TEXT in replayed.stdout
        assert f"replayed {exchanges} requests" in replayed.stderr
        assert "0 missed" in replayed.stderr
