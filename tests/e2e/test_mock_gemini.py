"""The real Gemini CLI (logged in with Google, on Code Assist) against `llmproxy mock`: its set-up calls get
`http` answers, its routing classifier a text answer naming the model, and a two-turn conversation drives its
tool loop — turn 1 asks for `echo llmproxy-ok` with its shell tool, the CLI runs it, turn 2 matches the
tool's result and answers with the final text, which the CLI prints. Its usage statistics and account look-up
are background traffic, answered harmlessly."""

import json
from pathlib import Path

import pytest

from tests.e2e.clis import FINAL_TEXT, GEMINI, mock_tool_loop
from tests.e2e.test_replay_gemini import gemini_env

SHELL = {"command": "echo llmproxy-ok", "description": "Print a marker"}
TIER = {"currentTier": {"id": "standard-tier", "name": "Standard"}, "cloudaicompanionProject": "llmproxy-test"}
EXPECTATIONS = {
    "expectations": [
        {"match": {"path": "/v1internal:loadCodeAssist"}, "http": {"status": 200, "json": TIER}},
        {
            "match": {"path": "^/v1internal:(retrieveUserQuota|listExperiments|fetchAdminControls)$"},
            "http": {"status": 200, "json": {}},
        },
        # the routing classifier: a non-streaming call asking which model should answer
        {
            "match": {"path": "/v1internal:generateContent"},
            "respond": {"text": json.dumps({"reasoning": "One shell command.", "model_choice": "flash"})},
        },
        {
            "conversation": {
                "match": {"path": "^/v1internal:streamGenerateContent"},
                "turns": [
                    {
                        "respond": {
                            "text": "Running it.",
                            "toolCalls": [{"name": "run_shell_command", "arguments": SHELL}],
                        }
                    },
                    {"match": {"containsToolResultFor": "run_shell_command"}, "respond": {"text": FINAL_TEXT}},
                ],
            }
        },
    ]
}


@pytest.mark.e2e
def test_gemini_cli_runs_a_mocked_tool_loop(tmp_path: Path) -> None:
    if GEMINI.binary is None:
        pytest.skip("gemini is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    done = mock_tool_loop(
        GEMINI, tmp_path, gemini_env(tmp_path), EXPECTATIONS, conversation=4, tool="run_shell_command"
    )
    assert "background requests harmlessly: Gemini CLI" in done.stderr
