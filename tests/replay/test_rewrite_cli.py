"""`--record-mode rewrite` as users run it: every way a run can fail before it starts leaves the old cassette
byte for byte as it was; a second recorder on the same cassette is refused with the first one's pid and
command, and the first one's live journal is left alone."""

import subprocess
import sys

import pytest

from llmproxy.cassette.files import journal_path
from llmproxy.cassette.store import load_cassette
from tests.filesystems import read_only
from tests.record.test_record_cli import run_client, start_recorder
from tests.record.world import CLIENTS, World

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow


def rewrite(world: World, *args: str, command: tuple[str, ...] | None = None) -> subprocess.CompletedProcess[str]:
    command = command or (sys.executable, str(CLIENTS), "openai")
    return subprocess.run(
        [
            *(sys.executable, "-m", "llmproxy", "replay", "--cassette", str(world.cassette)),
            *("--record-mode", "rewrite", *world.upstream_args(), *args, "--", *command),
        ],
        env=world.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def recorded(world: World) -> bytes:
    """The world's cassette holding an Anthropic session; its bytes."""
    assert world.record(sys.executable, str(CLIENTS), "anthropic").returncode == 0
    return world.cassette.read_bytes()


def test_a_port_in_use_leaves_the_cassette_as_it_was(world: World, recorded: bytes, busy_port: int) -> None:
    run = rewrite(world, "--port", str(busy_port))
    assert run.returncode == 1, run.stderr
    assert f"127.0.0.1:{busy_port}" in run.stderr
    assert world.cassette.read_bytes() == recorded
    assert not journal_path(world.cassette).exists()


def test_a_bad_map_leaves_the_cassette_as_it_was(world: World, recorded: bytes) -> None:
    run = rewrite(world, "--map", "api.openai.com=http://127.0.0.1:99999")
    assert run.returncode == 2, run.stderr
    assert "--map" in run.stderr
    assert world.cassette.read_bytes() == recorded
    assert not journal_path(world.cassette).exists()


def test_a_command_that_does_not_exist_leaves_the_cassette_as_it_was(world: World, recorded: bytes) -> None:
    run = rewrite(world, command=(str(world.tmp / "no-such-command"),))
    assert run.returncode == 127, run.stderr
    assert "no-such-command" in run.stderr
    assert world.cassette.read_bytes() == recorded
    assert not journal_path(world.cassette).exists()


def test_a_read_only_folder_leaves_the_cassette_as_it_was(world: World, recorded: bytes) -> None:
    with read_only(world.cassette.parent):
        run = rewrite(world)
    assert run.returncode == 1, run.stderr
    assert "session.json.journal" in run.stderr
    assert world.cassette.read_bytes() == recorded


def test_a_rewrite_that_ran_replaces_the_cassette(world: World, recorded: bytes) -> None:
    run = rewrite(world)
    assert run.returncode == 0, run.stderr
    assert [e.provider for e in load_cassette(world.cassette).exchanges] == ["openai", "openai"]


def test_a_rewrite_while_another_recording_runs_is_refused_and_takes_nothing(world: World, recorded: bytes) -> None:
    first, variables = start_recorder(world)
    try:
        run_client(world, variables, "openai")
        journal = journal_path(world.cassette)
        live = journal.read_bytes()
        run = rewrite(world)
        assert run.returncode == 1, run.stderr
        assert f"another recording is writing it (pid {first.pid}: " in run.stderr
        assert "llmproxy record --cassette" in run.stderr
        assert journal.read_bytes() == live
        assert world.cassette.read_bytes() == recorded
    finally:
        first.terminate()
        first.communicate(timeout=30)
    assert [e.provider for e in load_cassette(world.cassette).exchanges] == ["anthropic"] * 2 + ["openai"] * 2
