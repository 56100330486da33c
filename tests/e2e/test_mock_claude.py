"""The real Claude Code CLI against `llmproxy mock`: a two-turn conversation drives its tool loop — turn 1
asks for `echo llmproxy-ok` with Bash, Claude Code runs it, turn 2 matches the Bash result and answers with
the final text, which Claude Code prints. The request log shows the tool's output came back. Its settings,
feature-flag and telemetry requests are background traffic, answered harmlessly."""

import secrets
from pathlib import Path

import pytest

from tests.e2e.clis import CLAUDE, FINAL_TEXT, mock_tool_loop
from tests.e2e.test_replay_claude import claude_env

BASH = {"command": "echo llmproxy-ok", "description": "Print a marker"}
EXPECTATIONS = {
    "expectations": [
        {
            "conversation": {
                "match": {"provider": "anthropic"},
                "turns": [
                    {
                        "match": {"turnIndex": 0},
                        "respond": {"text": "Running it.", "toolCalls": [{"name": "Bash", "arguments": BASH}]},
                    },
                    {"match": {"containsToolResultFor": "Bash"}, "respond": {"text": FINAL_TEXT}},
                ],
            }
        },
    ]
}


@pytest.mark.e2e
def test_claude_code_runs_a_mocked_tool_loop(tmp_path: Path) -> None:
    if CLAUDE.binary is None:
        pytest.skip("claude is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    env = claude_env(tmp_path, "sk-ant-api03-" + secrets.token_urlsafe(60))
    done = mock_tool_loop(CLAUDE, tmp_path, env, EXPECTATIONS, conversation=1, tool="Bash")
    assert "background requests harmlessly: Claude Code" in done.stderr
