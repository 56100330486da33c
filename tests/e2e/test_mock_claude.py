"""The real Claude Code CLI against `llmproxy mock`: a two-turn conversation drives its tool loop — turn 1
asks for `echo llmproxy-ok` with Bash, Claude Code runs it, turn 2 matches the Bash result and answers with
the final text, which Claude Code prints. The request log shows the tool's output came back. Its settings,
feature-flag and telemetry requests are background traffic, answered harmlessly."""

import json
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.clis import CLAUDE, FINAL_TEXT, ROOT, cli_env, mock_tool_loop
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


@pytest.mark.e2e
def test_the_readme_mock_example_runs_as_written(tmp_path: Path) -> None:
    """The README's `agent.json` and command, run by bash in a checkout set up by scripts/setup.sh (`.venv`,
    `node_modules`), with a fresh home and no key in the environment."""
    if not (ROOT / "node_modules" / ".bin" / "claude").exists():
        pytest.skip("claude is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    section = (ROOT / "README.md").read_text().split("## Mock an LLM", 1)[1]
    blocks = dict(re.findall(r"```(json|sh)\n(.*?)```", section.split("\n## ", 1)[0], re.DOTALL))
    env = cli_env(tmp_path, "checkout")
    checkout = tmp_path / "checkout"
    (checkout / "agent.json").write_text(blocks["json"])
    (checkout / ".venv" / "bin").mkdir(parents=True)
    llmproxy = checkout / ".venv" / "bin" / "llmproxy"
    llmproxy.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m llmproxy "$@"\n')
    llmproxy.chmod(0o755)
    (checkout / "node_modules").symlink_to(ROOT / "node_modules")
    done = subprocess.run(
        ["bash", "-c", blocks["sh"]], cwd=checkout, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert FINAL_TEXT in done.stdout
    log = [json.loads(line) for line in (checkout / "mock.jsonl").read_text().splitlines()]
    answered = [entry for entry in log if entry.get("answeredBy", "").startswith("conversation 1 ")]
    assert [entry["answeredBy"] for entry in answered] == ["conversation 1 turn 1", "conversation 1 turn 2"]
    (result,) = answered[1]["toolResults"]
    assert (result["name"], result["text"].strip()) == ("Bash", "llmproxy-ok")  # it ran the real echo
