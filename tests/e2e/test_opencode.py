"""The real opencode (from npm), set to Anthropic, recorded through `llmproxy record` against a local
upstream, replayed strictly and offline from a differently named folder with a fresh home, and run under
`llmproxy mock` through a two-step tool loop; a deliberate miss ends it within seconds.

opencode asks a small model for the session's title beside the conversation, fetches its model catalogue
from models.opencode.ai and installs its plugin package from the npm registry in the background. The
recording maps the registry to the local upstream and turns the catalogue fetch off, so nothing reaches the
network; the replay leaves both on, and llmproxy answers them as the background traffic they are."""

from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.e2e.clis import (
    FINAL_TEXT,
    OPENCODE,
    around,
    assert_missed_fast,
    cli_env,
    mock_tool_loop,
    record_scripted,
    replay_changed_prompt,
    write_opencode_config,
)

KEY = "sk-ant-api03-" + "o" * 86


def opencode_env(root: Path, **variables: str) -> dict[str, str]:
    env = cli_env(root, ANTHROPIC_API_KEY=KEY, **variables)
    write_opencode_config(root / "home")
    return env


@pytest.fixture(autouse=True)
def installed() -> None:
    if OPENCODE.binary is None:
        pytest.skip("opencode is not installed: scripts/setup.sh installs it from package.json (needs npm)")


@pytest.mark.e2e
def test_opencode_records_and_replays_offline_from_another_folder(tmp_path: Path) -> None:
    env = opencode_env(tmp_path / "record", OPENCODE_DISABLE_MODELS_FETCH="1")
    recorded, cassette, upstream = record_scripted(OPENCODE, tmp_path, "api.anthropic.com", env, "registry.npmjs.org")
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert FINAL_TEXT in recorded.stdout
    assert len(upstream.bodies) == 2  # the tool call, then the final text (the title aside)
    exchanges = load_cassette(cassette).exchanges
    assert [e.operation for e in exchanges if e.provider == "anthropic"].count("messages") == 3

    root = tmp_path / "replay"
    replayed = around(
        OPENCODE, root, opencode_env(root), "replay", "--cassette", str(cassette), folder="another-project"
    )
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert FINAL_TEXT in replayed.stdout
    assert "0 missed" in replayed.stderr

    # a deliberate miss ends opencode at once (not after a minute of retries), with the diagnostic
    root = tmp_path / "miss"
    assert_missed_fast(replay_changed_prompt(OPENCODE, root, opencode_env(root), cassette))


BASH = {"command": "echo llmproxy-ok", "description": "Print a marker"}
EXPECTATIONS = {
    "expectations": [
        # the title it asks a small model for, beside the conversation
        {"match": {"latestMessageContains": "Generate a title for this conversation"}, "respond": {"text": "Echo"}},
        {
            "conversation": {
                "match": {"provider": "anthropic"},
                "turns": [
                    {"respond": {"text": "Running it.", "toolCalls": [{"name": "bash", "arguments": BASH}]}},
                    {"match": {"containsToolResultFor": "bash"}, "respond": {"text": FINAL_TEXT}},
                ],
            }
        },
    ]
}


@pytest.mark.e2e
def test_opencode_runs_a_mocked_tool_loop(tmp_path: Path) -> None:
    done = mock_tool_loop(OPENCODE, tmp_path, opencode_env(tmp_path), EXPECTATIONS, conversation=2, tool="bash")
    assert "background requests harmlessly: opencode model catalogue" in done.stderr
