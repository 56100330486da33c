"""Ctrl-C and SIGTERM as a terminal and a supervisor send them: to llmproxy's whole process group, with
llmproxy started in a session of its own. The command gets the signal, the proxy stops, the cassette is
finished (no journal left), llmproxy exits 130 or 143 as shells expect, and prints no traceback."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from llmproxy.cassette.files import journal_path
from llmproxy.cassette.store import load_cassette
from tests.record.world import CLIENTS, World

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

# records a session, says so, then waits to be signalled (sleep dies of the signal, as a CLI would)
CHILD = f'"{sys.executable}" "{CLIENTS}" anthropic > /dev/null && echo ready && exec sleep 60'


def start(world: World, *args: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "llmproxy", *args],
        env=world.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal gives a foreground job
    )
    return process


def wait_for(process: subprocess.Popen[str], line: str) -> None:
    assert process.stdout is not None
    for received in process.stdout:
        if received.startswith(line):
            return
    raise AssertionError(f"never printed {line!r}: {process.communicate(timeout=30)[1]}")


def stop(process: subprocess.Popen[str], signum: int) -> str:
    os.killpg(process.pid, signum)
    _, stderr = process.communicate(timeout=60)
    assert "Traceback" not in stderr, stderr
    assert process.returncode == 128 + signum, stderr
    return stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_record_around_a_command(world: World, signum: int) -> None:
    process = start(world, "record", "--cassette", str(world.cassette), *world.upstream_args(), "--", "sh", "-c", CHILD)
    wait_for(process, "ready")
    stderr = stop(process, signum)
    assert "recorded 2 exchanges" in stderr
    assert len(load_cassette(world.cassette).exchanges) == 2
    assert not journal_path(world.cassette).exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_record_until_stopped(world: World, signum: int) -> None:
    process = start(world, "record", "--cassette", str(world.cassette), *world.upstream_args(), "--print-env")
    variables = {}
    assert process.stdout is not None
    for line in process.stdout:
        name, _, value = line.removeprefix("export ").rstrip("\n").partition("=")
        variables[name] = value.strip("'")
        if name == "NODE_USE_ENV_PROXY":
            break
    client = [sys.executable, str(CLIENTS), "anthropic"]
    subprocess.run(client, env=world.env() | variables, check=True, capture_output=True, timeout=60)
    stop(process, signum)
    assert len(load_cassette(world.cassette).exchanges) == 2
    assert not journal_path(world.cassette).exists()


def test_replay_recording_new_episodes_around_a_command(world: World) -> None:
    assert world.record(sys.executable, str(CLIENTS), "openai").returncode == 0
    args = ["replay", "--cassette", str(world.cassette), "--record-mode", "new_episodes", *world.upstream_args()]
    process = start(world, *args, "--", "sh", "-c", CHILD)
    wait_for(process, "ready")
    stop(process, signal.SIGINT)
    assert [e.provider for e in load_cassette(world.cassette).exchanges] == ["openai"] * 2 + ["anthropic"] * 2
    assert not journal_path(world.cassette).exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_mock_around_a_command_and_until_stopped(world: World, tmp_path: Path, signum: int) -> None:
    expectations = tmp_path / "e.json"
    expectations.write_text(json.dumps({"expectations": [{"respond": {"text": "hi"}}]}))
    around = start(world, "mock", "--expectations", str(expectations), "--", "sh", "-c", "echo ready; exec sleep 60")
    wait_for(around, "ready")
    assert "mock answered 0 of 0 requests" in stop(around, signum)
    alone = start(world, "mock", "--expectations", str(expectations), "--print-env")
    wait_for(alone, "export NODE_USE_ENV_PROXY")
    stop(alone, signum)
