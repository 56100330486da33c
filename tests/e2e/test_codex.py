"""The real Codex CLI (package.json) as people run it, in its default configuration — its model traffic over
a WebSocket to wss://api.openai.com/v1/responses — and with an HTTPS provider: recorded by `llmproxy record`
against a scripted local upstream (`--map`), replayed strictly and offline from a differently named folder
with a fresh HOME, and run under `llmproxy mock` through a two-step tool loop.

Codex also fetches plugins (chatgpt.com, api.github.com) and uploads metrics (ab.chatgpt.com). Recording maps
them to the scripted upstream too; replay and the mock answer what changes every run as background traffic
(llmproxy.background_traffic), harmlessly, with nothing let out.
"""

import json
from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.certs import make_test_ca
from tests.e2e.clis import (
    CODEX,
    FINAL_TEXT,
    ScriptedServer,
    around,
    assert_missed_fast,
    cli_env,
    replay_changed_prompt,
)

MODEL_HOST = "api.openai.com"
OTHER_HOSTS = ("chatgpt.com", "ab.chatgpt.com", "api.github.com")
KEY = "sk-proj-" + "Zx8cV6bN4mQ2wE0rT9yU7iO5pA3sD1fG" * 2
# Codex with a provider of its own that speaks HTTPS only (docs/clis.md#codex-cli)
HTTPS_PROVIDER = (
    'model = "gpt-5-codex"\nmodel_provider = "openai-https"\n[model_providers.openai-https]\n'
    'name = "openai"\nbase_url = "https://api.openai.com/v1"\nenv_key = "OPENAI_API_KEY"\n'
    'wire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\nsupports_websockets = false\n'
)
CONFIGURATIONS = ["default (WebSocket)", "HTTPS provider"]
EXEC = {"name": "exec_command", "arguments": {"cmd": "echo llmproxy-ok"}}
EXPECTATIONS = {
    "expectations": [
        {
            "conversation": {
                "match": {"provider": "openai"},
                "turns": [
                    {"match": {"turnIndex": 0}, "respond": {"text": "Running it.", "toolCalls": [EXEC]}},
                    {"match": {"containsToolResultFor": "exec_command"}, "respond": {"text": FINAL_TEXT}},
                ],
            }
        },
    ]
}


def codex_env(root: Path, configuration: str, folder: str = "work") -> dict[str, str]:
    """A fresh user with an OpenAI key; the HTTPS provider in its config file when asked, else no file."""
    env = cli_env(root, folder, CODEX_API_KEY=KEY, OPENAI_API_KEY=KEY)
    if configuration == "HTTPS provider":
        (root / "home" / ".codex").mkdir()
        (root / "home" / ".codex" / "config.toml").write_text(HTTPS_PROVIDER)
    return env


def installed() -> None:
    if CODEX.binary is None:
        pytest.skip("codex is not installed: scripts/setup.sh installs it from package.json (needs npm)")


def record(tmp_path: Path, configuration: str) -> tuple[Path, ScriptedServer, str]:
    """Codex recorded against the scripted upstream: the cassette, the upstream, and llmproxy's stderr."""
    upstream_ca = make_test_ca(tmp_path, (MODEL_HOST, *OTHER_HOSTS))
    upstream = ScriptedServer(CODEX.turns, tls=upstream_ca.server_context)
    cassette = tmp_path / "codex.json"
    mapping = [arg for host in (MODEL_HOST, *OTHER_HOSTS) for arg in ("--map", f"{host}={upstream.url}")]
    root = tmp_path / "record"
    try:
        run = around(
            CODEX,
            root,
            codex_env(root, configuration),
            *("record", "--cassette", str(cassette), *mapping, "--upstream-ca", str(upstream_ca.cert_path)),
        )
    finally:
        upstream.close()
    assert run.returncode == 0, run.stderr[-3000:]
    assert FINAL_TEXT in run.stdout
    return cassette, upstream, run.stderr


@pytest.mark.e2e
@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_codex_records_then_replays_offline_from_another_folder(tmp_path: Path, configuration: str) -> None:
    installed()
    cassette, upstream, stderr = record(tmp_path, configuration)
    websocket = configuration == CONFIGURATIONS[0]
    assert len(upstream.bodies) == 2  # both turns reached the upstream through the proxy
    assert len(upstream.messages) == (3 if websocket else 0)  # and over a WebSocket: the warm-up first
    assert "not recorded" not in stderr
    assert KEY not in cassette.read_text()
    model = [e for e in load_cassette(cassette).exchanges if e.operation == "responses"]
    assert [bool(e.websocket) for e in model] == [websocket] * len(model)
    if websocket:
        assert len(model) == 3
        assert len({e.websocket.connection for e in model if e.websocket}) == 1  # one connection
        assert [e.request.url for e in model] == ["wss://api.openai.com/v1/responses"] * 3
        assert "3 over WebSocket" in stderr
    else:
        assert len(model) == 2

    # Strictly, offline: another folder, another home
    root = tmp_path / "elsewhere"
    env = codex_env(root, configuration, folder="another-project")
    replayed = around(CODEX, root, env, "replay", "--cassette", str(cassette), folder="another-project")
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert FINAL_TEXT in replayed.stdout
    assert "0 missed" in replayed.stderr
    assert "background requests harmlessly: Codex" in replayed.stderr  # its metrics and plugin look-ups
    assert "llmproxy-ok" in replayed.stdout  # Codex ran the command the recording asked for

    # a deliberate miss ends Codex at once, over either transport, showing the diagnostic
    root = tmp_path / "miss"
    missed = replay_changed_prompt(CODEX, root, codex_env(root, configuration), cassette)
    assert_missed_fast(missed)


@pytest.mark.e2e
@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_codex_runs_a_mocked_tool_loop(tmp_path: Path, configuration: str) -> None:
    installed()
    expectations, log = tmp_path / "expectations.json", tmp_path / "mock.jsonl"
    expectations.write_text(json.dumps(EXPECTATIONS))
    root = tmp_path / "run"
    done = around(
        CODEX, root, codex_env(root, configuration), "mock", "--expectations", str(expectations), "--log", str(log)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert FINAL_TEXT in done.stdout
    assert "background requests harmlessly: Codex" in done.stderr

    entries = [json.loads(line) for line in log.read_text().splitlines()]
    model = [entry for entry in entries if entry.get("operation") == "responses"]
    answered = [entry["answeredBy"] for entry in model]
    turns = ["conversation 1 turn 1", "conversation 1 turn 2"]
    websocket = configuration == CONFIGURATIONS[0]
    # over the WebSocket from its warm-up on, never through the HTTPS fallback
    assert answered == (["warm-up (asks for no output)", *turns] if websocket else turns)
    assert [entry.get("websocket", False) for entry in model] == [websocket] * len(model)
    assert model[-1]["turnIndex"] == 1
    results = model[-1]["toolResults"]
    assert [result["name"] for result in results] == ["exec_command"]
    assert "llmproxy-ok" in results[0]["text"]
