"""Rewriting a cassette and sharing one: the old cassette is replaced only once the run has started, and
atomically; one recorder per cassette, the second refused with the first one's name, before it touches
anything."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from llmproxy.cassette.files import cassette_exists, journal_path
from llmproxy.cassette.journal import this_process
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.errors import CassetteError
from tests.cassette.test_store import _wait_for_lines, record, streamed
from tests.filesystems import read_only

ROOT = Path(__file__).resolve().parents[2]


def contents(path: Path) -> list[str]:
    return [e.request.body.json_["messages"][0]["content"] for e in load_cassette(path).exchanges]  # type: ignore[union-attr]


@pytest.fixture
def old(tmp_path: Path) -> Path:
    path = tmp_path / "c.json"
    record(path, streamed("old one"), streamed("old two"))
    return path


def test_a_rewrite_replaces_the_cassette_once_started(old: Path) -> None:
    writer = CassetteWriter.open(old, Redactor(), rewrite=True)
    writer.start()
    writer.add(streamed("new"))
    _wait_for_lines(journal_path(old), 2)
    assert contents(old) == ["new"]  # even while it runs, the cassette reads as the new recording
    assert writer.close().exchanges == 1
    assert contents(old) == ["new"]
    assert [e.id for e in load_cassette(old).exchanges] == [1]
    assert not journal_path(old).exists()


def test_a_rewrite_that_never_started_leaves_the_cassette_byte_identical(old: Path) -> None:
    before = old.read_bytes()
    writer = CassetteWriter.open(old, Redactor(), rewrite=True)
    assert contents(old) == ["old one", "old two"]  # a pending rewrite does not hide the cassette
    writer.add(streamed("arrived before the run started"))
    writer.close()  # e.g. the command did not exist
    assert old.read_bytes() == before
    assert not journal_path(old).exists()


def test_a_rewrite_replaces_even_a_cassette_that_does_not_load(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(b'{"llmproxy_cassette": 1, "exchanges": [')
    writer = CassetteWriter.open(path, Redactor(), rewrite=True)
    writer.start()
    writer.add(streamed("fresh"))
    writer.close()
    assert contents(path) == ["fresh"]


CHILD = """
import sys, time
from pathlib import Path
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from tests.cassette.test_store import streamed
writer = CassetteWriter.open(Path(sys.argv[1]), Redactor(), rewrite=True)
if sys.argv[2] == "start":
    writer.start()
    writer.add(streamed("new"))
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize(("started", "expected"), [(True, ["new"]), (False, ["old one", "old two"])])
def test_a_killed_rewrite_loads_as_far_as_it_got(old: Path, started: bool, expected: list[str]) -> None:
    before = old.read_bytes()
    argv = [sys.executable, "-c", CHILD, str(old), "start" if started else "wait"]
    child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        _wait_for_lines(journal_path(old), 2 if started else 1)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()  # type: ignore[union-attr]
    assert old.read_bytes() == before  # kill -9: the cassette itself was never half-replaced
    assert contents(old) == expected  # with the journal: the new recording once its run had started
    record(old)  # the next recording folds what the killed one left
    assert contents(old) == expected
    assert not journal_path(old).exists()


def test_a_second_recorder_is_refused_with_the_first_ones_name(old: Path) -> None:
    first = CassetteWriter.open(old, Redactor(), owner="pid 4242: llmproxy record --cassette c.json -- claude")
    first.start()
    first.add(streamed("first's"))
    _wait_for_lines(journal_path(old), 2)
    live = journal_path(old).read_bytes()
    for rewrite in (False, True):
        with pytest.raises(CassetteError) as refused:
            CassetteWriter.open(old, Redactor(), rewrite=rewrite)
        assert str(refused.value) == (
            f"cannot record to {old}: another recording is writing it "
            "(pid 4242: llmproxy record --cassette c.json -- claude)"
        )
    assert journal_path(old).read_bytes() == live  # the live journal is untouched
    first.close()
    assert contents(old) == ["old one", "old two", "first's"]


def test_the_owner_is_this_process_with_secrets_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-api03-" + "A" * 90
    monkeypatch.setattr(sys, "argv", ["/somewhere/bin/llmproxy", "record", "--", "curl", "-H", f"x-api-key: {key}"])
    writer = CassetteWriter.open(tmp_path / "c.json", Redactor())
    try:
        header = orjson.loads(journal_path(tmp_path / "c.json").read_bytes().partition(b"\n")[0])
        assert header["owner"].startswith(f"pid {os.getpid()}: llmproxy record -- curl -H x-api-key: <redacted:")
        assert key not in header["owner"]
    finally:
        writer.close()


@pytest.mark.parametrize(
    ("argv0", "named"),
    [("/venv/lib/site-packages/pytest/__main__.py", "pytest"), ("/src/llmproxy/__main__.py", "llmproxy")],
)
def test_a_module_run_with_python_m_is_named_by_its_package(monkeypatch: pytest.MonkeyPatch, argv0: str, named: str):
    monkeypatch.setattr(sys, "argv", [argv0, "-q"])
    assert this_process() == f"pid {os.getpid()}: {named} -q"


def test_a_read_only_folder_is_refused_before_anything_changes(old: Path) -> None:
    before = old.read_bytes()
    with read_only(old.parent), pytest.raises(CassetteError, match=r"cannot create .*c\.json\.journal"):
        CassetteWriter.open(old, Redactor(), rewrite=True)
    assert old.read_bytes() == before
    assert sorted(p.name for p in old.parent.iterdir()) == ["c.json"]


def test_a_pending_append_counts_only_once_started(old: Path) -> None:
    """`pending`: what the pytest plugin records for one test joins the cassette only when the test's recording
    is kept (`start`); until then readers see the cassette as it was, and closing without `start` leaves it so."""
    before = old.read_bytes()
    dropped = CassetteWriter.open(old, Redactor(), pending=True)
    dropped.add(streamed("from a test whose upstream failed"))
    _wait_for_lines(journal_path(old), 2)
    assert contents(old) == ["old one", "old two"]  # a pending journal is not part of the cassette
    assert dropped.close().untouched
    assert old.read_bytes() == before
    assert not journal_path(old).exists()

    kept = CassetteWriter.open(old, Redactor(), pending=True)
    kept.add(streamed("kept"))
    kept.start()
    _wait_for_lines(journal_path(old), 2)
    assert contents(old) == ["old one", "old two", "kept"]  # started: the journal counts even if killed now
    kept.close()
    assert contents(old) == ["old one", "old two", "kept"]
    assert not journal_path(old).exists()


KILLED_PENDING = """
import sys, time
from pathlib import Path
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from tests.cassette.test_store import streamed
writer = CassetteWriter.open(Path(sys.argv[1]), Redactor(), pending=True)
writer.add(streamed("half a test"))
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("existing", [True, False])
def test_a_killed_pending_recording_leaves_nothing_that_loads(tmp_path: Path, existing: bool) -> None:
    """A test killed while it recorded: its journal is no cassette, and the next recording drops it."""
    path = tmp_path / "c.json"
    if existing:
        record(path, streamed("old one"))
    child = subprocess.Popen([sys.executable, "-c", KILLED_PENDING, str(path)], cwd=ROOT, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        _wait_for_lines(journal_path(path), 2)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()  # type: ignore[union-attr]
    assert journal_path(path).exists()
    assert cassette_exists(path) is existing  # a journal that never counted makes no cassette
    if existing:
        assert contents(path) == ["old one"]
    record(path, streamed("next"))
    assert contents(path) == (["old one", "next"] if existing else ["next"])
    assert not journal_path(path).exists()
