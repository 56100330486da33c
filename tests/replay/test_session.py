"""The in-process API: `recording()` and `replaying()` around code that runs a client."""

import json
import subprocess
import sys

from llmproxy.session import Listening, recording, replaying
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
