"""The in-process API: `recording()` and `replaying()` around code that runs a client."""

import json
import os
import subprocess
import sys
from pathlib import Path

import anthropic
import httpx2 as httpx
import pytest

from llmproxy.session import Listening, recording, replaying
from tests.conformance.server import LoopbackServer, Reply
from tests.record.world import CLIENTS, HOSTS, World


def run_client(world: World, environment: dict[str, str], env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, str(CLIENTS), "openai"],
        env=world.env() | environment | (env or {}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_record_then_replay_in_process(world: World) -> None:
    listening = Listening(
        mapping=dict.fromkeys(HOSTS, world.upstream.url),
        upstream_ca=world.upstream_ca,
        ca_directory=world.tmp / "llmproxy",
    )
    with recording(world.cassette, listening) as proxy:
        assert proxy.url.startswith("http://127.0.0.1:")
        assert proxy.environment["HTTPS_PROXY"] == proxy.url
        recorded = run_client(world, proxy.environment)
    assert "recorded 2 exchanges" in proxy.summary
    world.upstream.close()

    with replaying(world.cassette, listening=Listening(ca_directory=world.tmp / "llmproxy"), timing=None) as proxy:
        assert json.loads(run_client(world, proxy.environment)) == json.loads(recorded)
        assert proxy.misses == []
        failing = subprocess.run(
            [sys.executable, str(CLIENTS), "openai"],
            env=world.env() | proxy.environment | {"QUESTION": "Something else?"},
            capture_output=True,
            timeout=60,
        )
        assert failing.returncode != 0
        assert len(proxy.misses) == 1
        assert proxy.misses[0].closest is not None
    assert "1 missed" in proxy.summary


def test_json_rpc_replays_on_method_and_params_with_the_callers_id(tmp_path: Path, loopback: LoopbackServer) -> None:
    """An MCP server over Streamable HTTP, recorded with record_hosts: replay matches method and params, not
    the id, and answers with the id of the request it answers."""
    listening = Listening(ca_directory=tmp_path / "ca")
    cassette = tmp_path / "mcp.json"
    call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "a"}}}
    answer = {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "hello"}]}}
    loopback.queue(Reply(200, {"content-type": "application/json"}, json.dumps(answer).encode()))
    with recording(cassette, listening, record_hosts=["127.0.0.1"]) as proxy:
        recorded = httpx.post(f"{loopback.url}/mcp", json={**call, "id": 7}, proxy=proxy.url).json()
    assert recorded == answer

    with replaying(cassette, listening=listening, timing=None) as proxy:
        replayed = httpx.post(f"{loopback.url}/mcp", json={**call, "id": "abc-42"}, proxy=proxy.url)
        other = httpx.post(f"{loopback.url}/mcp", json={**call, "params": {"name": "x"}, "id": 8}, proxy=proxy.url)
    assert replayed.json() == {**answer, "id": "abc-42"}
    assert other.status_code == 200  # a miss of a tool server's: its JSON-RPC error, as its SDK reads one
    assert other.json()["id"] == 8
    assert other.json()["error"]["code"] == -32001
    assert "$.params.name" in other.json()["error"]["message"]


def test_apply_sets_this_process_environment_and_puts_it_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client created inside `apply()` goes through the proxy without the caller copying variables about; after
    it, each variable is as it was: restored, or gone."""
    monkeypatch.setenv("HTTPS_PROXY", "http://corporate.example:3128")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    cassette = Path(__file__).resolve().parents[2] / "cassettes" / "quickstart.json"
    question = "In two sentences: what does an LLM traffic recorder let me do in CI?"
    with replaying(cassette, listening=Listening(ca_directory=tmp_path / "ca"), timing=None) as proxy:
        with proxy.apply():
            assert os.environ["HTTPS_PROXY"] == proxy.url
            assert os.environ["SSL_CERT_FILE"] == proxy.environment["SSL_CERT_FILE"]
            with (
                anthropic.Anthropic(api_key="any", max_retries=0) as client,
                client.messages.stream(
                    model="claude-haiku-4-5", max_tokens=200, messages=[{"role": "user", "content": question}]
                ) as stream,
            ):
                assert stream.get_final_text()
        assert os.environ["HTTPS_PROXY"] == "http://corporate.example:3128"
        assert "SSL_CERT_FILE" not in os.environ
    assert proxy.misses == []
    assert proxy.unused == []
