"""The real Gemini CLI, logged in with Google, recorded through `llmproxy record` talking to Code Assist
(cloudcode-pa.googleapis.com, mapped to a local upstream), then replayed offline from another directory and
home: the gemini-cli preset, chosen from its User-Agent, ignores the prompt and session ids, the workspace
directory, the home, the date and the process group its shell tool reports, all of which it varies."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.certs import make_test_ca
from tests.e2e.clis import FINAL_TEXT, GEMINI, ScriptedServer

HOST = "cloudcode-pa.googleapis.com"


def gemini_env(root: Path) -> dict[str, str]:
    (root / "home").mkdir(parents=True)
    (root / "work").mkdir()
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(root / "home"),
        "LANG": "C.UTF-8",
        "LLMPROXY_HOME": str(root.parent / "llmproxy"),
        "GOOGLE_GENAI_USE_GCA": "true",
        "GOOGLE_CLOUD_ACCESS_TOKEN": "test-token-not-secret",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }


def run(root: Path, *llmproxy: str) -> subprocess.CompletedProcess[str]:
    assert GEMINI.binary is not None
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", *llmproxy, "--", GEMINI.binary, *GEMINI.argv],
        cwd=root / "work",
        env=gemini_env(root),
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.mark.e2e
def test_gemini_cli_session_replays_offline_from_elsewhere(tmp_path: Path) -> None:
    if GEMINI.binary is None:
        pytest.skip("gemini is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    upstream_ca = make_test_ca(tmp_path, (HOST,))
    upstream = ScriptedServer(GEMINI.turns, GEMINI.canned, tls=upstream_ca.server_context)
    cassette = tmp_path / "gemini.json"
    try:
        mapping = ("--map", f"{HOST}={upstream.url}", "--upstream-ca", str(upstream_ca.cert_path))
        recorded = run(tmp_path / "record", "record", "--cassette", str(cassette), *mapping)
    finally:
        upstream.close()
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert FINAL_TEXT in recorded.stdout
    exchanges = load_cassette(cassette).exchanges
    streamed = [e for e in exchanges if e.response is not None and e.response.events is not None]
    assert len(streamed) == 2  # the tool call, then the final text

    # the Gemini CLI also sends usage statistics to play.googleapis.com and asks www.googleapis.com who is
    # logged in: not LLM traffic to replay; let them try the (absent) network, as docs/replay.md advises
    allowed = ("--allow-host", "play.googleapis.com", "--allow-host", "www.googleapis.com")
    replayed = run(tmp_path / "replay", "replay", "--cassette", str(cassette), *allowed)
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert FINAL_TEXT in replayed.stdout
    assert "0 missed" in replayed.stderr
