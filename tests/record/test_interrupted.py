"""A recording killed part-way never passes for a whole one: the journal it left is recovered by the next
recording of its cassette, or read by a replay that says the cassette is partial, each time with one line
naming the file and what happened; the temporary file the dead writer left is removed by the next recording.
`llmproxy record` is killed with kill -9 (the proxy, the writer process, or both) while the official SDKs
record through it."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmproxy.cassette.files import journal_path
from llmproxy.cassette.store import load_cassette
from tests.record.test_record_cli import RECORDED, children, record_two_sessions, run_client, start_recorder
from tests.record.world import CLIENTS, World

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow


def stopped_at(journal: Path) -> str:
    return time.strftime("%H:%M", time.localtime(journal.stat().st_mtime))


def leftovers(world: World) -> list[str]:
    return sorted(path.name for path in world.cassette.parent.iterdir())


def replay_once(world: World) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "llmproxy",
            "replay",
            "--cassette",
            str(world.cassette),
            "--record-mode",
            "once",
            "--",
            sys.executable,
            str(CLIENTS),
            "anthropic",
        ],
        env=world.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_recording_killed_with_its_writer_is_partial_until_the_next_recording_recovers_it(world: World) -> None:
    process = record_two_sessions(world)
    (writer,) = children(process.pid)
    os.killpg(process.pid, signal.SIGKILL)
    os.kill(writer, signal.SIGKILL)
    process.communicate(timeout=10)
    journal = journal_path(world.cassette)
    temporary = f".session.json.{writer}.tmp"  # the new cassette the writer was writing beside the old
    assert leftovers(world) == [temporary, "session.json.journal"]
    stopped = f"stopped at {stopped_at(journal)} (pid {process.pid} is gone)"

    # `once`: the cassette exists (its journal counts), so it is replayed — and said to be partial
    replayed = replay_once(world)
    assert replayed.returncode == 0, replayed.stderr
    assert (
        f"{world.cassette} is partial: the run recording it {stopped} before it ended; the 4 exchanges"
        f" {journal} holds are read with it, and the next recording of it recovers them"
    ) in replayed.stderr
    assert leftovers(world) == [temporary, "session.json.journal"]  # a replay changes no file

    recorded = world.record(sys.executable, str(CLIENTS), "anthropic")
    assert recorded.returncode == 0, recorded.stderr
    assert f"recovered 4 exchanges from {journal} left by a run that {stopped}; removed {temporary}" in recorded.stderr
    assert recorded.stderr.count("recovered") == 1
    assert leftovers(world) == ["session.json"]
    exchanges = load_cassette(world.cassette).exchanges
    assert [(e.provider, e.streaming) for e in exchanges] == [*RECORDED, ("anthropic", False), ("anthropic", True)]
    assert [e.id for e in exchanges] == [1, 2, 3, 4, 5, 6]

    again = replay_once(world)
    assert again.returncode == 0, again.stderr
    assert "partial" not in again.stderr


def test_a_writer_killed_while_the_proxy_runs_leaves_a_journal_the_next_recording_recovers(world: World) -> None:
    process, variables = start_recorder(world)
    run_client(world, variables, "anthropic")
    journal = journal_path(world.cassette)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not journal.exists() or journal.read_text().count("\n") < 3):
        time.sleep(0.05)
    (writer,) = children(process.pid)
    os.kill(writer, signal.SIGKILL)
    run_client(world, variables, "openai")  # the proxy serves on; its exchanges can no longer be recorded
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode != 0
    assert f"{world.cassette}: the writer process died; its journal holds what it wrote" in stderr
    assert leftovers(world) == [f".session.json.{writer}.tmp", "session.json.journal"]
    stopped = stopped_at(journal)

    recorded = world.record(sys.executable, str(CLIENTS), "openai")
    assert recorded.returncode == 0, recorded.stderr
    assert (
        f"recovered 2 exchanges from {journal} left by a run that stopped at {stopped} (pid {process.pid} is gone);"
        f" removed .session.json.{writer}.tmp"
    ) in recorded.stderr
    assert leftovers(world) == ["session.json"]
    assert [(e.provider, e.streaming) for e in load_cassette(world.cassette).exchanges] == [
        ("anthropic", False),
        ("anthropic", True),
        ("openai", True),
        ("openai", False),
    ]
