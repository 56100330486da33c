"""The real Claude Code CLI, recorded through `llmproxy record` against a local upstream, then replayed
offline with the upstream stopped: the same final answer, also from other directories and homes (new session
ids, other paths in the system prompt), thanks to the claude-code preset chosen from its User-Agent."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.certs import make_test_ca
from tests.e2e.clis import CLAUDE, FINAL_TEXT, ScriptedServer


def claude_env(root: Path, key: str) -> dict[str, str]:
    (root / "home").mkdir(parents=True)
    (root / "work").mkdir()
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(root / "home"),
        "LANG": "C.UTF-8",
        "LLMPROXY_HOME": str(root.parent / "llmproxy"),
        "ANTHROPIC_API_KEY": key,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def run(root: Path, env: dict[str, str], *llmproxy: str) -> subprocess.CompletedProcess[str]:
    binary = CLAUDE.binary
    assert binary is not None
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", *llmproxy, "--", binary, *CLAUDE.argv],
        cwd=root / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.mark.e2e
def test_claude_code_session_replays_offline_run_after_run(tmp_path: Path) -> None:
    if CLAUDE.binary is None:
        pytest.skip("claude is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    upstream_ca = make_test_ca(tmp_path, ("api.anthropic.com",))
    upstream = ScriptedServer(CLAUDE.turns, tls=upstream_ca.server_context)
    cassette = tmp_path / "claude.json"
    key = "sk-ant-api03-" + secrets.token_urlsafe(60)
    try:
        recorded = run(
            tmp_path / "record",
            claude_env(tmp_path / "record", key),
            *("record", "--cassette", str(cassette)),
            *("--map", f"api.anthropic.com={upstream.url}", "--upstream-ca", str(upstream_ca.cert_path)),
        )
    finally:
        upstream.close()
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert FINAL_TEXT in recorded.stdout
    assert len(upstream.bodies) == 2
    exchanges = len(load_cassette(cassette).exchanges)

    for attempt in ("first", "second", "third"):  # a new session, directory and home each time
        root = tmp_path / attempt
        replayed = run(
            root, claude_env(root, "sk-ant-api03-" + secrets.token_urlsafe(60)), "replay", "--cassette", str(cassette)
        )
        assert replayed.returncode == 0, replayed.stderr[-3000:]
        assert FINAL_TEXT in replayed.stdout
        assert f"replayed {exchanges} requests" in replayed.stderr
        assert "0 missed" in replayed.stderr
