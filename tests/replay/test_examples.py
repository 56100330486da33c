"""The committed example cassettes replay offline through real clients, as the README shows."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
