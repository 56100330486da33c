"""A real coding CLI replayed with the default preset alone (`--preset default`), as a CLI nobody wrote a preset
for is: opencode, whose system prompt holds its working directory and date and whose tool descriptions and
project folders hold its HOME, recorded in one folder with HOME inside it, replays strictly and offline from
another folder with a fresh HOME; a changed prompt still misses."""

from pathlib import Path

import pytest

from llmproxy.cassette.model import JsonBody
from llmproxy.cassette.store import load_cassette
from tests.e2e.clis import (
    FINAL_TEXT,
    OPENCODE,
    around,
    assert_missed_fast,
    record_scripted,
    replay_changed_prompt,
)
from tests.e2e.test_opencode import opencode_env


@pytest.mark.e2e
def test_a_cli_replays_from_another_folder_with_only_the_default_preset(tmp_path: Path) -> None:
    if OPENCODE.binary is None:
        pytest.skip("opencode is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    env = opencode_env(tmp_path / "record", OPENCODE_DISABLE_MODELS_FETCH="1")
    recorded, cassette, _ = record_scripted(OPENCODE, tmp_path, "api.anthropic.com", env, "registry.npmjs.org")
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    working = str(tmp_path / "record" / "work")
    held = [
        e for e in load_cassette(cassette).exchanges if isinstance(e.request.body, JsonBody) and e.places is not None
    ]
    assert held  # the requests that hold where it ran keep it, as sent
    assert all(e.places is not None and e.places.cwd == working for e in held)
    assert any(working in str(e.request.body.json_) for e in held if isinstance(e.request.body, JsonBody))

    root = tmp_path / "replay"
    replayed = around(
        OPENCODE,
        root,
        opencode_env(root),
        "replay",
        "--cassette",
        str(cassette),
        "--preset",
        "default",
        folder="another-project",
    )
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert FINAL_TEXT in replayed.stdout
    assert "0 missed" in replayed.stderr

    root = tmp_path / "miss"
    assert_missed_fast(replay_changed_prompt(OPENCODE, root, opencode_env(root), cassette, "--preset", "default"))
