"""The real Claude Code CLI against `llmproxy mock`: a two-turn conversation drives its tool loop — turn 1
asks for `echo llmproxy-ok` with Bash, Claude Code runs it, turn 2 matches the Bash result and answers with
the final text, which Claude Code prints. The request log shows the tool's output came back."""

import json
import secrets
from pathlib import Path

import pytest

from tests.e2e.clis import CLAUDE, FINAL_TEXT, around
from tests.e2e.test_replay_claude import claude_env

BASH = {"command": "echo llmproxy-ok", "description": "Print a marker"}
EXPECTATIONS = {
    "expectations": [
        # Claude Code's own look-ups (settings, policy limits): answered as an API-key account sees them
        {"match": {"path": "^/api/claude_code/"}, "http": {"status": 404, "json": {"error": "not found"}}},
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
    expectations, log = tmp_path / "expectations.json", tmp_path / "mock.jsonl"
    expectations.write_text(json.dumps(EXPECTATIONS))
    env = claude_env(tmp_path / "run", "sk-ant-api03-" + secrets.token_urlsafe(60))
    done = around(CLAUDE, tmp_path / "run", env, "mock", "--expectations", str(expectations), "--log", str(log))
    assert done.returncode == 0, done.stderr[-3000:]
    assert FINAL_TEXT in done.stdout

    entries = [json.loads(line) for line in log.read_text().splitlines()]
    answered = [entry for entry in entries if entry.get("answeredBy", "").startswith("conversation 2")]
    assert [entry["answeredBy"] for entry in answered] == ["conversation 2 turn 1", "conversation 2 turn 2"]
    results = answered[1]["toolResults"]
    assert [result["name"] for result in results] == ["Bash"]
    assert "llmproxy-ok" in results[0]["text"]
    assert "llmproxy-ok" not in json.dumps(answered[0].get("toolResults", []))
