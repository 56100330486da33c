"""The real Codex CLI, recorded through `llmproxy record` talking to api.openai.com (mapped to a local
upstream), then replayed offline from another directory and home: the codex preset, chosen from its
User-Agent, ignores the session ids, prompt-cache key, working directory and CODEX_HOME it varies."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.certs import make_test_ca
from tests.e2e.clis import CODEX, FINAL_TEXT, ScriptedServer

CONFIG = (
    'model = "gpt-5-codex"\nmodel_provider = "openai-proxied"\n[model_providers.openai-proxied]\n'
    'name = "openai"\nbase_url = "https://api.openai.com/v1"\nenv_key = "OPENAI_API_KEY"\n'
    'wire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\nsupports_websockets = false\n'
)


def codex_env(root: Path) -> dict[str, str]:
    (root / "home").mkdir(parents=True)
    (root / "work").mkdir()
    (root / "home" / "config.toml").write_text(CONFIG)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(root / "home"),
        "CODEX_HOME": str(root / "home"),
        "LANG": "C.UTF-8",
        "LLMPROXY_HOME": str(root.parent / "llmproxy"),
        "OPENAI_API_KEY": "sk-proj-" + "x" * 40,
    }


def run(root: Path, *llmproxy: str) -> subprocess.CompletedProcess[str]:
    assert CODEX.binary is not None
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", *llmproxy, "--", CODEX.binary, *CODEX.argv],
        cwd=root / "work",
        env=codex_env(root),
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.mark.e2e
def test_codex_session_replays_offline_from_elsewhere(tmp_path: Path) -> None:
    if CODEX.binary is None:
        pytest.skip("codex is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    upstream_ca = make_test_ca(tmp_path, ("api.openai.com",))
    upstream = ScriptedServer(CODEX.turns, tls=upstream_ca.server_context)
    cassette = tmp_path / "codex.json"
    try:
        mapping = ("--map", f"api.openai.com={upstream.url}", "--upstream-ca", str(upstream_ca.cert_path))
        recorded = run(tmp_path / "record", "record", "--cassette", str(cassette), *mapping)
    finally:
        upstream.close()
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert FINAL_TEXT in recorded.stdout
    exchanges = load_cassette(cassette).exchanges
    assert [e.operation for e in exchanges if e.provider] == ["responses", "responses"]

    # Codex also asks GitHub for plugins and sends metrics (different every run) to ab.chatgpt.com: not LLM
    # traffic to replay; let them try the (absent) network, as docs/replay.md advises
    allowed = ("--allow-host", "api.github.com", "--allow-host", "ab.chatgpt.com")
    replayed = run(tmp_path / "replay", "replay", "--cassette", str(cassette), *allowed)
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert FINAL_TEXT in replayed.stdout
    assert "0 missed" in replayed.stderr
