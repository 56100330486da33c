"""Claude Code as the MCP client of llmproxy: configured as docs/control.md shows — `claude mcp add … -- llmproxy
mcp --attach` over stdio, or `claude mcp add --transport http …` to the control port — and run by `llmproxy mock`
whose script's first turn calls `mcp__llmproxy__get_status`. Claude Code starts `llmproxy mcp --attach` (the
mock's control URL and token reach it through Claude Code's environment) or calls /llmproxy/mcp, the tool runs
against the mock, and its result — the mock's status — is what the second model turn receives: read back from
the journal, after Claude Code ends, by the command the mock ran."""

import json
import re
import secrets
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.e2e.clis import CLAUDE, ROOT
from tests.e2e.test_replay_claude import claude_env

TOOL = "mcp__llmproxy__get_status"
FINAL_TEXT = "llmproxy is mocking, and has answered one request so far."
EXPECTATIONS = {
    "expectations": [
        {
            "conversation": {
                "match": {"provider": "anthropic"},
                "turns": [
                    {
                        "match": {"turnIndex": 0},
                        "respond": {"text": "Asking llmproxy.", "toolCalls": [{"name": TOOL, "arguments": {}}]},
                    },
                    {"match": {"containsToolResultFor": TOOL}, "respond": {"text": FINAL_TEXT}},
                ],
            }
        },
    ]
}
# What `llmproxy mock` runs: the page's `claude mcp add` line, Claude Code, then (still inside the run) the
# journal's chat requests, whole.
DRIVER = """
import json, subprocess, sys
from llmproxy.control.client import Client

added = subprocess.run(["bash", "-c", sys.argv[2]], capture_output=True, text=True, timeout=60)
assert added.returncode == 0, added.stdout + added.stderr
done = subprocess.run(sys.argv[3:], capture_output=True, text=True, timeout=240)
sys.stderr.write(done.stderr)
control = Client.from_environment()
mocked = control.journal(source="mocked").entries
entries = [control.entry(entry.seq).model_dump(mode="json", by_alias=True) for entry in mocked]
with open(sys.argv[1], "w") as out:
    json.dump({"stdout": done.stdout, "status": done.returncode, "entries": entries}, out)
"""


@pytest.mark.e2e
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_claude_code_calls_an_llmproxy_tool_and_the_model_gets_its_result(tmp_path: Path, transport: str) -> None:
    if CLAUDE.binary is None:
        pytest.skip("claude is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    env = claude_env(tmp_path, "sk-ant-api03-" + secrets.token_urlsafe(60))
    work = tmp_path / "work"
    shims = tmp_path / "bin"  # `llmproxy` on PATH, as a checkout's .venv/bin puts it
    shims.mkdir()
    (shims / "llmproxy").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m llmproxy "$@"\n')
    (shims / "llmproxy").chmod(0o755)
    env["PATH"] = f"{shims}:{env['PATH']}"
    # Claude Code gives an MCP server a few seconds to start before the first turn goes without its tools; on a
    # loaded machine starting `llmproxy mcp` (Python, the SDK) can take longer than that
    env["MCP_TIMEOUT"] = "120000"

    page = (ROOT / "docs" / "control.md").read_text().split("\n### Claude Code\n", 1)[1].split("\n### ", 1)[0]
    stdio, http = re.findall(r"```sh\n(.*?)```", page, re.S)
    add = next(line for line in stdio.splitlines() if "mcp add" in line) if transport == "stdio" else http
    add = add.replace("claude mcp add", f"{CLAUDE.binary} mcp add", 1)

    (tmp_path / "expectations.json").write_text(json.dumps(EXPECTATIONS))
    (tmp_path / "driver.py").write_text(DRIVER)
    found = tmp_path / "found.json"
    prompt = "Check llmproxy's status with its get_status tool, then say what you found."
    claude = [CLAUDE.binary, "-p", prompt, "--allowedTools", TOOL]
    mock = [sys.executable, "-m", "llmproxy", "mock", "--expectations", str(tmp_path / "expectations.json")]
    if transport == "http":  # as the page says: the control port directly, not through the proxy
        env["NO_PROXY"] = "127.0.0.1"
    run = subprocess.run(
        [*mock, "--", sys.executable, str(tmp_path / "driver.py"), str(found), add, *claude],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    configured = json.loads((work / ".mcp.json").read_text())["mcpServers"]["llmproxy"]
    if transport == "stdio":
        assert (configured["command"], configured["args"]) == ("llmproxy", ["mcp", "--attach"])
    else:
        assert (configured["type"], configured["url"].rsplit("/", 2)[1:]) == ("http", ["llmproxy", "mcp"])
        assert configured["headers"] == {"Authorization": "Bearer ${LLMPROXY_CONTROL_TOKEN}"}  # no token on disk
    result = json.loads(found.read_text())
    assert result["status"] == 0, run.stderr[-3000:]
    assert FINAL_TEXT in result["stdout"]

    chats = [
        entry for entry in result["entries"] if urlsplit(entry["exchange"]["request"]["url"]).path == "/v1/messages"
    ]
    first, second = chats[0], chats[-1]
    assert "tool_result" not in json.dumps(first["exchange"]["request"])
    blocks = [
        block
        for message in second["exchange"]["request"]["body"]["json"]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    (tool_result,) = blocks
    content = tool_result["content"]
    text = content if isinstance(content, str) else "".join(part["text"] for part in content if part["type"] == "text")
    status = json.loads(text)  # the tool's answer: the running mock's status, as get_status gives it
    assert status["mode"] == "mock"
    assert status["describe"] == f"mocking from {tmp_path / 'expectations.json'}"
    assert status["journal"]["bySource"]["mocked"] >= 1  # the mock counted the first turn it had answered
