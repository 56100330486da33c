"""Clients set by base URL in every mode: record, replay and mock give the child `$LLMPROXY_BASE_URL`, which
serves every provider by path, and with `--base-url-env` each provider's own variable; a `--reverse`
listener's URL is given as `$LLMPROXY_REVERSE_URL_<n>`. A session recorded through the base URL carries the
URLs it would have had through the proxy, so it replays through either."""

import json
import subprocess
import sys

import httpx2 as httpx
import pytest

from llmproxy.cassette.store import load_cassette
from llmproxy.session import Listening, recording
from tests.conformance.server import LoopbackServer, Reply
from tests.record.world import CLIENTS, World
from tests.replay.test_replay_cli import replay

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

SHOW = "import json, os; print(json.dumps({k: v for k, v in os.environ.items() if 'BASE_URL' in k or 'LLMPROXY' in k}))"


def shown(run: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert run.returncode == 0, run.stderr
    variables: dict[str, str] = json.loads(run.stdout)
    return variables


@pytest.mark.parametrize("mode", ["record", "replay", "mock"])
def test_every_mode_gives_the_child_its_base_url(world: World, mode: str) -> None:
    (world.tmp / "e.json").write_text('{"expectations": []}')
    (world.tmp / "c.json").write_text('{"llmproxy_cassette": 1, "exchanges": []}')
    options = {
        "record": ["--cassette", str(world.tmp / "new.json")],
        "replay": ["--cassette", str(world.tmp / "c.json")],
        "mock": ["--expectations", str(world.tmp / "e.json")],
    }[mode]
    command = [sys.executable, "-m", "llmproxy", mode, *options]
    plain = subprocess.run(
        [*command, "--", sys.executable, "-c", SHOW], env=world.env(), capture_output=True, text=True, timeout=60
    )
    base_url = shown(plain)["LLMPROXY_BASE_URL"]
    assert base_url.startswith("http://127.0.0.1:")
    assert f"base URL {base_url} (also in $LLMPROXY_BASE_URL)" in plain.stderr
    assert "ANTHROPIC_BASE_URL" not in shown(plain)  # only when asked

    asked = subprocess.run(
        [*command, "--base-url-env", "--base-url-port", "0", "--", sys.executable, "-c", SHOW],
        env=world.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    variables = shown(asked)
    base_url = variables["LLMPROXY_BASE_URL"]
    assert variables["ANTHROPIC_BASE_URL"] == base_url
    assert variables["OPENAI_BASE_URL"] == base_url + "/v1"
    assert variables["GOOGLE_GEMINI_BASE_URL"] == base_url
    assert "ANTHROPIC_BASE_URL, OPENAI_BASE_URL" in asked.stderr


def test_reverse_listeners_are_given_to_the_child(world: World) -> None:
    listening = Listening(reverse=("https://api.anthropic.com", "https://gw.example/openai"), ca_directory=world.tmp)
    with recording(world.tmp / "c.json", listening) as proxy:
        assert proxy.environment["LLMPROXY_REVERSE_URL_1"] == proxy.listeners[1].url
        assert proxy.environment["LLMPROXY_REVERSE_URL_2"] == proxy.listeners[2].url
        assert proxy.environment["LLMPROXY_BASE_URL"] == proxy.base_url
        assert proxy.base_url not in {listener.url for listener in proxy.listeners}


def test_a_reverse_listener_reached_through_the_proxy_still_reaches_its_target(
    world: World, loopback: LoopbackServer
) -> None:
    loopback.queue(Reply(200, {"content-type": "application/json"}, b'{"ok": true}'))
    listening = Listening(reverse=(f"{loopback.url}/gateway",), ca_directory=world.tmp)
    with recording(world.tmp / "c.json", listening) as proxy:
        reverse_url = proxy.environment["LLMPROXY_REVERSE_URL_1"]
        # mitmproxy refuses to connect to its own listeners: llmproxy sends it where the listener would
        answer = httpx.post(f"{reverse_url}/v1/messages", json={"model": "m"}, proxy=proxy.url, timeout=10)
    assert answer.json() == {"ok": True}
    assert [received.path for received in loopback.received] == ["/gateway/v1/messages"]


def test_a_session_recorded_through_the_base_url_replays_through_either(world: World) -> None:
    # the Anthropic SDK reads ANTHROPIC_BASE_URL; the proxy variables are set too, so its requests to the base
    # URL reach llmproxy through the proxy first: each is still recorded once
    recorded = world.record_args("--base-url-env", "--", sys.executable, str(CLIENTS), "anthropic")
    run = subprocess.run(recorded, env=world.env(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    exchanges = load_cassette(world.cassette).exchanges
    assert [e.request.url.split("?")[0] for e in exchanges] == ["https://api.anthropic.com/v1/messages"] * 2
    assert len(world.upstream.bodies) == 2
    world.upstream.close()

    through_proxy = replay(world)
    assert through_proxy.returncode == 0, through_proxy.stderr
    through_base_url = replay(world, "--base-url-env")
    assert through_base_url.returncode == 0, through_base_url.stderr
    assert json.loads(through_proxy.stdout) == json.loads(through_base_url.stdout) == json.loads(run.stdout)


def test_a_path_with_no_public_host_says_to_use_a_reverse_listener(world: World) -> None:
    with recording(world.tmp / "c.json", Listening(ca_directory=world.tmp)) as proxy:
        answer = httpx.post(f"{proxy.base_url}/openai/deployments/gpt/chat/completions", json={}, timeout=10)
        elsewhere = httpx.get(f"{proxy.base_url}/health", timeout=10)
    assert answer.status_code == 404
    assert "azure has no public host" in answer.text
    assert "--reverse URL" in answer.text
    assert "no LLM API path llmproxy knows" in elsewhere.text
