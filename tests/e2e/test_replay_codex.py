"""The real Codex CLI, recorded through `llmproxy record` talking to api.openai.com (mapped to a local
upstream), then replayed offline from another directory and home: the codex preset, chosen from its
User-Agent, ignores the session ids, prompt-cache key, working directory and CODEX_HOME it varies."""

from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.e2e.clis import CODEX, FINAL_TEXT, around, cli_env, record_scripted

CONFIG = (
    'model = "gpt-5-codex"\nmodel_provider = "openai-proxied"\n[model_providers.openai-proxied]\n'
    'name = "openai"\nbase_url = "https://api.openai.com/v1"\nenv_key = "OPENAI_API_KEY"\n'
    'wire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\nsupports_websockets = false\n'
)


def codex_env(root: Path) -> dict[str, str]:
    env = cli_env(root, CODEX_HOME=str(root / "home"), OPENAI_API_KEY="sk-proj-" + "x" * 40)
    (root / "home" / "config.toml").write_text(CONFIG)
    return env


@pytest.mark.e2e
def test_codex_session_replays_offline_from_elsewhere(tmp_path: Path) -> None:
    if CODEX.binary is None:
        pytest.skip("codex is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    recorded, cassette, _ = record_scripted(CODEX, tmp_path, "api.openai.com", codex_env(tmp_path / "record"))
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert FINAL_TEXT in recorded.stdout
    exchanges = load_cassette(cassette).exchanges
    assert [e.operation for e in exchanges if e.provider] == ["responses", "responses"]

    # Codex also asks GitHub for plugins and sends metrics (different every run) to ab.chatgpt.com: not LLM
    # traffic to replay; let them try the (absent) network, as docs/replay.md advises
    allowed = ("--allow-host", "api.github.com", "--allow-host", "ab.chatgpt.com")
    root = tmp_path / "replay"
    replayed = around(CODEX, root, codex_env(root), "replay", "--cassette", str(cassette), *allowed)
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert FINAL_TEXT in replayed.stdout
    assert "0 missed" in replayed.stderr
