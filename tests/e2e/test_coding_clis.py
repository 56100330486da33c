"""The real Claude Code, Codex and Gemini CLIs run a tool loop on llmproxy's encodings, offline.

Proves the Anthropic, Responses and Code Assist stream encoders satisfy the clients that matter most: each CLI
parses the tool call, runs the tool, sends its output back, and prints the scripted final answer.
"""

import json

import pytest

from llmproxy.providers.registry import CHAT_CODECS
from tests.e2e.clis import CLIS, FINAL_TEXT, run_session


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(CLIS))
def test_tool_loop(name: str) -> None:
    cli = CLIS[name]
    if cli.binary is None:
        pytest.skip(f"{name} is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    session = run_session(cli, cli.binary)
    assert session.process.returncode == 0, session.process.stderr[-3000:]
    assert FINAL_TEXT in session.process.stdout
    assert len(session.bodies) == 2
    second = CHAT_CODECS[cli.codec].decode_request(json.dumps(session.bodies[1]).encode())
    results = [r for m in second.messages for r in m.tool_results]
    assert [r.tool_call_id for r in results] == ["call_capture_1"]
    assert "llmproxy-ok" in results[0].text
