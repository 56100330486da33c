"""`llmproxy replay` as users run it: a session recorded through the proxy from the official SDKs, served
back offline with the upstream stopped; misses explained; record modes."""

import json
import subprocess
import sys

import pytest

from llmproxy.cassette.store import load_cassette
from tests.record.world import CLIENTS, World, installed

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

ITALY = {"QUESTION": "What is the capital of Italy?"}  # the client asks something else than it recorded


def replay(
    world: World, *args: str, client: str = "anthropic", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`llmproxy replay … -- python clients.py CLIENT`."""
    command = [sys.executable, str(CLIENTS), client]
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", "replay", "--cassette", str(world.cassette), *args, "--", *command],
        env=world.env() | (env or {}),
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
    "cohere",  # ClientV2.chat and chat_stream
]


@pytest.mark.parametrize("client", CLIENTS_AND_PROVIDERS)
def test_a_recorded_session_replays_offline_to_the_same_results(world: World, client: str) -> None:
    recorded = record_then_stop(world, client)
    run = replay(world, "--timing", "instant", client=client)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == json.loads(recorded)
    assert "replayed 2 requests" in run.stderr
    assert "0 missed, 0 unused" in run.stderr


def test_streams_keep_their_recorded_timing_through_the_relay(world: World) -> None:
    recorded = record_then_stop(world, "anthropic")
    run = replay(world)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == json.loads(recorded)


def test_no_upstream_connection_in_none_mode_even_for_a_miss(world: World) -> None:
    assert world.record(sys.executable, str(CLIENTS), "anthropic").returncode == 0
    before = world.upstream.connections
    run = replay(world)  # hits, with the upstream still up
    assert run.returncode == 0, run.stderr
    assert replay(world, env=ITALY).returncode != 0  # a miss
    assert world.upstream.connections == before


def test_a_changed_prompt_misses_and_says_where(world: World) -> None:
    record_then_stop(world, "anthropic")
    run = replay(world, env=ITALY)
    assert run.returncode != 0
    # the SDK raised its invalid-request error, carrying the diagnostic
    assert "BadRequestError" in run.stderr
    assert "closest is exchange 1" in run.stderr
    assert "$.messages[0].content" in run.stderr
    assert "capital of France" in run.stderr
    assert "capital of Italy" in run.stderr
    assert "1 missed" in run.stderr
    summary = run.stderr[run.stderr.index("llmproxy replay: replayed") :]  # the end-of-run summary keeps the paths
    assert (
        "  miss: POST https://api.anthropic.com/v1/messages: no recorded exchange matches; closest is exchange 1"
        in summary
    )
    assert "\n    $.messages[0].content: recorded '…t is the capital of France? Answer in one word.'" in summary


def test_new_episodes_appends_exactly_the_missed_exchanges(world: World) -> None:
    assert world.record(sys.executable, str(CLIENTS), "anthropic").returncode == 0
    run = replay(world, "--record-mode", "new_episodes", *world.upstream_args(), env=ITALY)
    assert run.returncode == 0, run.stderr
    exchanges = load_cassette(world.cassette).exchanges
    assert len(exchanges) == 4  # the first request changed, and so did the second (it re-sends the first)
    assert "capital of Italy" in json.dumps(exchanges[2].request.body.model_dump(by_alias=True))


def test_once_records_a_missing_cassette_then_replays_it(world: World) -> None:
    first = replay(world, "--record-mode", "once", *world.upstream_args())
    assert first.returncode == 0, first.stderr
    assert len(load_cassette(world.cassette).exchanges) == 2
    world.upstream.close()
    second = replay(world, "--record-mode", "once", "--timing", "instant")  # exists now: strict, offline
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert len(load_cassette(world.cassette).exchanges) == 2


def test_all_records_afresh_and_rewrite_starts_over(world: World) -> None:
    assert world.record(sys.executable, str(CLIENTS), "anthropic").returncode == 0
    everything = replay(world, "--record-mode", "all", *world.upstream_args())
    assert everything.returncode == 0, everything.stderr
    assert len(load_cassette(world.cassette).exchanges) == 4  # nothing replayed: all forwarded and appended
    rewritten = replay(world, "--record-mode", "rewrite", *world.upstream_args(), client="openai")
    assert rewritten.returncode == 0, rewritten.stderr
    assert [e.provider for e in load_cassette(world.cassette).exchanges] == ["openai", "openai"]


def test_a_missing_cassette_in_none_mode_is_an_error_before_anything_runs(world: World) -> None:
    run = replay(world)
    assert run.returncode == 1
    assert "no such cassette" in run.stderr
    assert "proxy on" not in run.stderr
