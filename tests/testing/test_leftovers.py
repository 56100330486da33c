"""A pytest run killed part-way through a test that records (kill -9: a crashed xdist worker, a CI job cancelled)
leaves the test's pending journal and the new cassette's temporary file. The next run that records the test
discards both, and ends with one line naming the journal and what happened to it; it never replays the two
exchanges of eight as if they were the test's recording."""

import re
import signal
import time
from pathlib import Path

import pytest

from llmproxy.cassette.files import journal_path
from tests.testing.test_plugin import exchanges, module
from tests.testing.upstream import Upstream

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

EIGHT = """
import os, signal, time
from pathlib import Path

def test_b(llmproxy):
    for n in range(8):
        ask(f"question {n}")
        if n == 1 and os.environ.get("KILL_AFTER_TWO"):  # once two exchanges are journalled: kill -9
            journal = Path(__file__).parent / "cassettes" / "test_eight" / "test_b.json.journal"
            while journal.read_bytes().count(b"\\n") < 3:  # its header, then a line per exchange
                time.sleep(0.01)
            os.kill(os.getpid(), signal.SIGKILL)
"""


def killed_after_two(tester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[Path, str]:
    """Run the test until two of its eight exchanges are journalled, then kill it; the journal and the temporary
    file it leaves."""
    monkeypatch.setenv("KILL_AFTER_TWO", "1")
    assert tester.runpytest_subprocess(*args).ret == -signal.SIGKILL
    monkeypatch.delenv("KILL_AFTER_TWO")
    folder = tester.path / "cassettes" / "test_eight"
    (temporary,) = [path.name for path in folder.iterdir() if path.name.endswith(".tmp")]
    journal = journal_path(folder / "test_b.json")
    assert journal.read_bytes().count(b"\n") == 3
    return journal, temporary


def discarded(journal: Path, temporary: str) -> str:
    pid = re.fullmatch(r"\.test_b\.json\.(\d+)\.tmp", temporary)
    assert pid is not None
    stopped = time.strftime("%H:%M", time.localtime(journal.stat().st_mtime))
    return (
        f"discarded {journal}: 2 exchanges of a recording that never finished, left by a run that stopped at"
        f" {stopped} (pid {pid[1]} is gone); removed {temporary}"
    )


def test_a_test_killed_while_recording_leaves_nothing_the_next_run_replays(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    module(tester, upstream, "test_eight", EIGHT)
    cassette = tester.path / "cassettes" / "test_eight" / "test_b.json"
    journal, temporary = killed_after_two(tester, monkeypatch)
    line = discarded(journal, temporary)
    result = tester.runpytest()  # once: the journal is no cassette, so the test records again
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*= llmproxy =*", line])
    assert sorted(path.name for path in cassette.parent.iterdir()) == ["test_b.json"]
    assert len(exchanges(cassette)) == 8

    journal, temporary = killed_after_two(tester, monkeypatch, "--llmproxy-mode", "rewrite")
    line = discarded(journal, temporary)
    recorded = cassette.read_bytes()
    replayed = tester.runpytest("--llmproxy-mode", "none", "--llmproxy-strict-unused")
    replayed.assert_outcomes(passed=1)  # the cassette as it was: the killed rewrite never counted
    replayed.stdout.fnmatch_lines(
        [
            f"{cassette}: ignoring {journal}: 2 exchanges of a recording that never finished, left by a run that"
            " stopped at *; the next recording of it discards them"
        ]
    )
    assert cassette.read_bytes() == recorded
    rewritten = tester.runpytest("--llmproxy-mode", "rewrite")
    rewritten.assert_outcomes(passed=1)
    rewritten.stdout.fnmatch_lines([line])
    assert sorted(path.name for path in cassette.parent.iterdir()) == ["test_b.json"]
    assert len(exchanges(cassette)) == 8
