"""The real Gemini CLI, logged in with Google, recorded through `llmproxy record` talking to Code Assist
(cloudcode-pa.googleapis.com, mapped to a local upstream), then replayed offline from another directory and
home: the gemini-cli preset, chosen from its User-Agent, ignores the prompt and session ids, the workspace
directory, the home, the date and the process group its shell tool reports, all of which it varies."""

from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.e2e.clis import (
    FINAL_TEXT,
    GEMINI,
    around,
    assert_missed_fast,
    cli_env,
    record_scripted,
    replay_changed_prompt,
)


def gemini_env(root: Path) -> dict[str, str]:
    login = {"GOOGLE_GENAI_USE_GCA": "true", "GOOGLE_CLOUD_ACCESS_TOKEN": "test-token-not-secret"}
    return cli_env(root, **login, GEMINI_CLI_TRUST_WORKSPACE="true")


@pytest.mark.e2e
def test_gemini_cli_session_replays_offline_from_elsewhere(tmp_path: Path) -> None:
    if GEMINI.binary is None:
        pytest.skip("gemini is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    host = "cloudcode-pa.googleapis.com"
    recorded, cassette, _ = record_scripted(GEMINI, tmp_path, host, gemini_env(tmp_path / "record"))
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert FINAL_TEXT in recorded.stdout
    exchanges = load_cassette(cassette).exchanges
    streamed = [e for e in exchanges if e.response is not None and e.response.events is not None]
    assert len(streamed) == 2  # the tool call, then the final text

    # from a differently named folder (the Gemini CLI names its project folders after it) and a fresh home;
    # its usage statistics and account look-up are answered as background traffic
    root = tmp_path / "replay"
    replayed = around(GEMINI, root, gemini_env(root), "replay", "--cassette", str(cassette), folder="another-project")
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert FINAL_TEXT in replayed.stdout
    assert "0 missed" in replayed.stderr
    assert "background requests harmlessly: Gemini CLI" in replayed.stderr

    # a deliberate miss ends the Gemini CLI at once (not after minutes of retries), with the diagnostic
    root = tmp_path / "miss"
    assert_missed_fast(replay_changed_prompt(GEMINI, root, gemini_env(root), cassette))
