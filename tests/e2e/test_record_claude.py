"""The real Claude Code CLI recorded by `llmproxy record`: it talks to api.anthropic.com through the proxy
(TLS intercepted, llmproxy's CA trusted through the injected environment alone), a local HTTPS upstream
answers under that name, and its exchanges land in the cassette, redacted."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.certs import make_test_ca
from tests.e2e.clis import CLAUDE, FINAL_TEXT, ScriptedServer


@pytest.mark.e2e
def test_claude_code_session_is_recorded(tmp_path: Path) -> None:
    binary = CLAUDE.binary
    if binary is None:
        pytest.skip("claude is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    upstream_ca = make_test_ca(tmp_path, ("api.anthropic.com",))
    upstream = ScriptedServer(CLAUDE.turns, tls=upstream_ca.server_context)
    secret = "sk-ant-api03-" + secrets.token_urlsafe(60)
    cassette = tmp_path / "claude.json"
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "LLMPROXY_HOME": str(tmp_path / "llmproxy"),
        "ANTHROPIC_API_KEY": secret,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    try:
        run = subprocess.run(
            [
                *(sys.executable, "-m", "llmproxy", "record", "--cassette", str(cassette)),
                *("--map", f"api.anthropic.com={upstream.url}", "--upstream-ca", str(upstream_ca.cert_path)),
                *("--", binary, *CLAUDE.argv),
            ],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        upstream.close()
    assert run.returncode == 0, run.stderr[-3000:]
    assert FINAL_TEXT in run.stdout
    assert len(upstream.bodies) == 2  # both turns went through the proxy to the mapped upstream
    text = cassette.read_text()
    assert secret not in text
    exchanges = load_cassette(cassette).exchanges
    messages = [e for e in exchanges if e.operation == "messages"]
    assert len(messages) == 2
    for exchange in messages:
        assert (exchange.provider, exchange.streaming) == ("anthropic", True)
        assert exchange.request.url == "https://api.anthropic.com/v1/messages?beta=true"
        assert exchange.response is not None
        assert exchange.response.status == 200
        assert exchange.response.events
    # the key Claude Code sent is in the cassette only as its placeholder
    assert any("x-api-key: <redacted:" in line for line in messages[0].request.headers)
