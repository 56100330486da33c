"""A request the upstream never answered is not an answer: `llmproxy record` does not write it (as vcrpy writes
nothing for a request that raised), names it at the end, and fails the run when nothing at all could be
recorded — unless `--record-unanswered` asks to record the outage. The official SDKs are the clients, in code
that catches their errors and carries on, so that only llmproxy can tell."""

import json
import socket
import subprocess
import sys
from pathlib import Path

import anthropic
import pytest

from llmproxy.cassette.store import load_cassette
from llmproxy.session import Listening, recording
from tests.record.world import CLIENTS, World, turns
from tests.testing.upstream import Upstream

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

CHAT = "POST https://api.openai.com/v1/chat/completions"
MESSAGES = "POST https://api.anthropic.com/v1/messages"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(world: World, *args: str, prompt: str | None = None) -> subprocess.CompletedProcess[str]:
    """`llmproxy record|replay ARGS -- python clients.py coping`, each provider as the world maps it unless
    `args` maps it elsewhere."""
    command, *options = args
    cassette = ["--cassette", str(world.cassette)]
    env = world.env() | ({"PROMPT": prompt} if prompt else {})
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "llmproxy",
            command,
            *cassette,
            *world.upstream_args(),
            *options,
            "--",
            sys.executable,
            str(CLIENTS),
            "coping",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def summary(stderr: str) -> list[str]:
    """The run's closing lines: from the one llmproxy starts with its summary."""
    lines = stderr.splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("llmproxy record: recorded"))
    return lines[start:]


def test_a_request_the_upstream_never_answered_is_not_recorded_but_named(world: World) -> None:
    refused = f"--map=api.openai.com=https://127.0.0.1:{closed_port()}"
    recorded = run(world, "record", refused)
    assert recorded.returncode == 0, recorded.stderr  # something was recorded: the command's own status
    assert json.loads(recorded.stdout) == {"openai": "InternalServerError", "anthropic": turns(1)[0].text}
    assert summary(recorded.stderr) == [
        f"llmproxy record: recorded 1 exchange to {world.cassette} (anthropic 1; 1 streamed, 0 not)",
        "not recorded: 1 request the upstream never answered (--record-unanswered records them):",
        f"  {CHAT}: connection refused",
    ]
    # said when it happened too, with the error as it came
    assert f"not recorded: {CHAT}: connection refused ([Errno 111] Connect call failed" in recorded.stderr
    assert [e.provider for e in load_cassette(world.cassette).exchanges] == ["anthropic"]


def test_a_run_whose_upstream_answered_nothing_writes_no_cassette_and_fails(world: World) -> None:
    down = f"https://127.0.0.1:{closed_port()}"
    unreachable = run(world, "record", f"--map=api.openai.com={down}", f"--map=api.anthropic.com={down}")
    assert json.loads(unreachable.stdout) == {"openai": "InternalServerError", "anthropic": "InternalServerError"}
    assert unreachable.returncode == 1  # the client exited 0: llmproxy says the recording failed
    assert summary(unreachable.stderr) == [
        f"llmproxy record: recorded nothing to {world.cassette}: the upstream answered none of 2 requests;"
        f" {world.cassette} is not written",
        "not recorded: 2 requests the upstream never answered (--record-unanswered records them):",
        f"  {CHAT}: connection refused",
        f"  {MESSAGES}: connection refused",
    ]
    assert list(world.cassette.parent.iterdir()) == []  # no cassette, no journal, no temporary file

    # so `once` is not stuck replaying an outage: with the upstream back, it records
    again = run(world, "replay", "--record-mode", "once")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == {"openai": turns(1)[0].text, "anthropic": turns(2)[1].text}
    assert [e.provider for e in load_cassette(world.cassette).exchanges] == ["openai", "anthropic"]

    # and a cassette that exists stays as it was, byte for byte, when a rewrite reaches nothing
    before = world.cassette.read_bytes()
    rewrite = run(
        world, "replay", "--record-mode", "rewrite", f"--map=api.openai.com={down}", f"--map=api.anthropic.com={down}"
    )
    assert rewrite.returncode == 1
    assert f"the upstream answered none of 2 requests; {world.cassette} is as it was" in rewrite.stderr
    assert world.cassette.read_bytes() == before
    assert sorted(path.name for path in world.cassette.parent.iterdir()) == [world.cassette.name]


@pytest.mark.parametrize(
    ("prompt", "why"),
    [
        ("hang up", "the upstream closed the connection"),
        ("break off", "the answer broke off: the upstream closed the connection"),
        ("never answer", "the client stopped waiting"),  # the SDK's read timeout (3 s here)
    ],
)
def test_a_hang_up_a_broken_stream_and_a_timeout_are_not_answers(world: World, prompt: str, why: str) -> None:
    with Upstream() as upstream:
        recorded = run(world, "record", f"--map=api.anthropic.com={upstream.url}", prompt=prompt)
    assert recorded.returncode == 0, recorded.stderr
    failures = ("InternalServerError", "RemoteProtocolError", "APITimeoutError")
    assert json.loads(recorded.stdout)["anthropic"] in failures
    assert summary(recorded.stderr)[1:] == [
        "not recorded: 1 request the upstream never answered (--record-unanswered records them):",
        f"  {MESSAGES}: {why}",
    ]
    assert [e.provider for e in load_cassette(world.cassette).exchanges] == ["openai"]


def test_record_unanswered_records_the_outage_and_replay_serves_it(world: World) -> None:
    refused = f"--map=api.openai.com=https://127.0.0.1:{closed_port()}"
    recorded = run(world, "record", refused, "--record-unanswered")
    assert recorded.returncode == 0, recorded.stderr
    assert summary(recorded.stderr) == [
        f"llmproxy record: recorded 2 exchanges to {world.cassette} (anthropic 1, openai 1; 1 streamed, 1 not;"
        " 1 failed)"
    ]
    failed, answered = load_cassette(world.cassette).exchanges
    assert failed.response is None
    assert failed.error is not None
    assert "Connect call failed" in failed.error
    assert answered.response is not None

    replayed = run(world, "replay")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout) == {"openai": "InternalServerError", "anthropic": turns(1)[0].text}


def test_injected_faults_are_still_recorded_as_the_client_met_them(world: World) -> None:
    """Chaos stands in for the upstream on purpose: `record` keeps what the client went through (docs/chaos.md)."""
    recorded = run(world, "record", "--fail", "529")
    assert recorded.returncode == 0, recorded.stderr
    assert "not recorded" not in recorded.stderr
    exchanges = load_cassette(world.cassette).exchanges
    assert [(e.provider, e.response.status if e.response else None) for e in exchanges] == [
        ("openai", 529),
        ("anthropic", 529),
    ]
    assert all(e.injected for e in exchanges)


def test_the_python_api_records_no_outage_either(tmp_path: Path) -> None:
    cassette = tmp_path / "c.json"
    dead = f"http://127.0.0.1:{closed_port()}"
    with recording(cassette, Listening(ca_directory=tmp_path / "ca")) as proxy:
        http = anthropic.DefaultHttpxClient(proxy=proxy.url)
        client = anthropic.Anthropic(api_key="sk-ant-test", base_url=dead, http_client=http, max_retries=0)
        with pytest.raises(anthropic.InternalServerError):  # llmproxy's 502: the upstream did not answer
            client.messages.create(model="claude-haiku-4-5", max_tokens=8, messages=[{"role": "user", "content": "?"}])
        client.close()
    assert proxy.upstream_unreachable
    assert proxy.summary.splitlines()[1:] == [
        "not recorded: 1 request the upstream never answered (--record-unanswered records them):",
        f"  POST {dead}/v1/messages: connection refused",
    ]
    assert not cassette.exists()
