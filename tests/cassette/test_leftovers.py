"""What a recording that died left beside its cassette: its journal (recovered or discarded by the next
recording, read or ignored by a reader, each said in one line) and its temporary files (removed by the next
recording, never a live process's)."""

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from llmproxy.cassette.files import journal_path
from llmproxy.cassette.leftovers import gathered
from llmproxy.cassette.recorded import load_recorded
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from tests.cassette.test_rewrite import contents
from tests.cassette.test_store import _wait_for_lines, record, streamed


def gone_pid() -> int:
    """The pid of a process that has ended."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(ended.stdout)


def test_temporary_files_of_writers_that_are_gone_are_removed_and_no_others(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, streamed("one"))
    dead = gone_pid()
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        gone = tmp_path / f".c.json.{dead}.tmp"
        live = tmp_path / f".c.json.{running.pid}.tmp"
        other = tmp_path / f".other.json.{dead}.tmp"
        for temporary in (gone, live, other):
            temporary.write_bytes(b'{\n  "llmproxy_cassette": 1,\n  "exchanges": [')
        with gathered() as said:
            record(path, streamed("two"))
        assert said == [f"{path}: removed what a writer that is gone left; removed {gone.name}"]
        assert not gone.exists()
        assert live.exists()  # another process, still running, may be writing it
        assert other.exists()  # another cassette's
    finally:
        running.kill()
        running.wait()
    assert contents(path) == ["one", "two"]


def leave_journal(path: Path, header: dict[str, object], *texts: str) -> Path:
    """A journal as a recording that died left it (its owner gone)."""
    record(path, streamed("old"))
    before = path.read_bytes()
    writer = CassetteWriter.open(path, Redactor())
    for text in texts:
        writer.add(streamed(text))
    _wait_for_lines(journal_path(path), len(texts) + 1)
    lines = journal_path(path).read_bytes().splitlines(keepends=True)[1:]
    writer.close()
    path.write_bytes(before)
    journal_path(path).write_bytes(orjson.dumps(header) + b"\n" + b"".join(lines))
    return journal_path(path)


def test_a_journal_a_live_recording_holds_is_read_without_a_word(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, streamed("old"))
    writer = CassetteWriter.open(path, Redactor())
    writer.add(streamed("new"))
    _wait_for_lines(journal_path(path), 2)
    with gathered() as said:
        assert contents(path) == ["old", "new"]
        assert len(load_recorded(path)) == 2
    writer.close()
    assert said == []


def test_a_dead_recordings_journal_is_read_as_partial_then_recovered(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    dead = gone_pid()
    journal = leave_journal(path, {"llmproxy_journal": 1, "owner": f"pid {dead}: llmproxy record"}, "one", "two")
    stopped = time.strftime("%H:%M", time.localtime(journal.stat().st_mtime))
    by = f"stopped at {stopped} (pid {dead} is gone)"
    with gathered() as said:
        assert len(load_recorded(path)) == 3
    assert said == [
        f"{path} is partial: the run recording it {by} before it ended; the 2 exchanges {journal} holds are read"
        " with it, and the next recording of it recovers them"
    ]
    with gathered() as said:
        record(path, streamed("three"))
    assert said == [f"recovered 2 exchanges from {journal} left by a run that {by}"]
    assert contents(path) == ["old", "one", "two", "three"]


@pytest.mark.parametrize(
    ("header", "what"),
    [
        ({"llmproxy_journal": 1, "append": "pending"}, "1 exchange of a recording that never finished"),
        ({"llmproxy_journal": 1, "rewrite": "pending"}, "1 exchange of a recording that never finished"),
        (None, "a recording that stopped as it began"),
    ],
)
def test_a_journal_that_never_counted_is_ignored_then_discarded(
    tmp_path: Path, header: dict[str, object] | None, what: str
) -> None:
    path = tmp_path / "c.json"
    journal = leave_journal(path, {"llmproxy_journal": 1}, "never counted")
    if header is None:
        journal.write_bytes(b'{"llmproxy_journal": 1, "ow')  # killed while writing its header
    else:
        journal.write_bytes(orjson.dumps(header) + b"\n" + journal.read_bytes().partition(b"\n")[2])
    stopped = time.strftime("%H:%M", time.localtime(journal.stat().st_mtime))
    by = f"left by a run that stopped at {stopped}"  # no owner named: no pid to name
    with gathered() as said:
        assert contents(path) == ["old"]
    assert said == [f"{path}: ignoring {journal}: {what}, {by}; the next recording of it discards them"]
    with gathered() as said:
        record(path, streamed("next"))
    assert said == [f"discarded {journal}: {what}, {by}"]
    assert contents(path) == ["old", "next"]


def test_an_owner_that_still_runs_is_not_called_gone(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Its writer died (the lock is free) while the process that started it runs on."""
    path = tmp_path / "c.json"
    leave_journal(path, {"llmproxy_journal": 1, "owner": f"pid {os.getpid()}: python"}, "one")
    with caplog.at_level(logging.WARNING, logger="llmproxy.cassette.leftovers"):
        record(path)
    assert f"(pid {os.getpid()} still runs, but no longer records it)" in caplog.text


def test_a_killed_rewrite_is_read_in_the_cassettes_place_and_a_whole_test_recording_as_whole(tmp_path: Path) -> None:
    dead = gone_pid()
    owner = f"pid {dead}: pytest"
    rewrite = leave_journal(tmp_path / "r.json", {"llmproxy_journal": 1, "owner": owner, "rewrite": "started"}, "new")
    test = leave_journal(tmp_path / "t.json", {"llmproxy_journal": 1, "owner": owner, "append": "started"}, "new")
    stopped = time.strftime("%H:%M", time.localtime(rewrite.stat().st_mtime))
    by = f"stopped at {stopped} (pid {dead} is gone)"
    with gathered() as said:
        assert contents(tmp_path / "r.json") == ["new"]
        assert contents(tmp_path / "t.json") == ["old", "new"]
    assert said == [
        f"{tmp_path / 'r.json'} is partial: the run recording it {by} before it ended; the 1 exchange {rewrite}"
        " holds is read in its place, and the next recording of it recovers them",
        f"{tmp_path / 't.json'}: the 1 exchange {test} holds, a test's whole recording whose run {by} before"
        " writing it in, is read with it; the next recording of it recovers them",
    ]
