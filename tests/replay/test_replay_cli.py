"""`llmproxy replay` as users run it: a session recorded through the proxy from the official SDKs, served
back offline with the upstream stopped; misses explained; record modes."""

import json
import subprocess
import sys

import pytest

from tests.record.world import CLIENTS, World, installed


def replay(world: World, *args: str, command: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", "replay", "--cassette", str(world.cassette), *args, "--", *command],
        env=world.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def record_then_stop(world: World, client: str) -> str:
    """Record the client's session, then stop the upstream: what replay serves can come only from the cassette."""
    run = world.record(sys.executable, str(CLIENTS), client)
    assert run.returncode == 0, run.stderr
    world.upstream.close()
    return run.stdout


CLIENTS_AND_PROVIDERS = [
    "anthropic",
    "openai",
    pytest.param("gemini", marks=pytest.mark.skipif(not installed("google.genai"), reason="no google-genai")),
    "bedrock",
    "ollama",
    "azure",
]


@pytest.mark.parametrize("client", CLIENTS_AND_PROVIDERS)
def test_a_recorded_session_replays_offline_to_the_same_results(world: World, client: str) -> None:
    recorded = record_then_stop(world, client)
    run = replay(world, "--timing", "instant", command=(sys.executable, str(CLIENTS), client))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == json.loads(recorded)
    assert "replayed 2 requests" in run.stderr
    assert "0 missed, 0 unused" in run.stderr
