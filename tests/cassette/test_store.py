import asyncio
import logging
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.files import PendingCassette, encode_cassette, journal_path
from llmproxy.cassette.model import JsonBody, TextBody, header_pairs
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.errors import CassetteError
from llmproxy.model.exchange import RawEvent, RawExchange
from tests.cassette.factory import ANTHROPIC_KEY, exchange, request, response, sse_events
from tests.filesystems import read_only

JSON_LEAF = st.integers(0, 9) | st.text(max_size=5)
ROOT = Path(__file__).resolve().parents[2]


def record(path: Path, *exchanges: RawExchange, redactor: Redactor | None = None, keep_unanswered: bool = False) -> str:
    writer = CassetteWriter.open(path, redactor or Redactor(), keep_unanswered=keep_unanswered)
    writer.start()
    for item in exchanges:
        writer.add(item)
    return str(writer.close())


def streamed(text: str = "hi") -> RawExchange:
    events = sse_events({"type": "content_block_delta", "text": text}, {"type": "message_stop"})
    body = {"model": "claude-x", "messages": [{"role": "user", "content": text}], "stream": True}
    return exchange(request(body), response(events=events, content_type="text/event-stream"))


def test_a_recorded_exchange_loads_with_everything_in_place(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    summary = record(path, streamed(), exchange(request(b"", path="/v1/models", method="GET"), response()))
    first, *decoding = summary.splitlines()
    assert first == f"recorded 2 exchanges to {path} (anthropic 2; 1 streamed, 1 not)"
    # the made-up stream is not Anthropic's: recorded as it came, and said so
    assert decoding[0] == "1 of 1 exchange did not decode (recorded and served as they came): anthropic messages 1"
    assert decoding[1].startswith("  not decoded: exchange 1: anthropic messages response: anthropic stream: $.index:")
    text = path.read_text()
    assert text.endswith("}\n")
    assert ANTHROPIC_KEY not in text
    assert not journal_path(path).exists()
    first, second = load_cassette(path).exchanges
    assert (first.id, first.provider, first.operation, first.model, first.streaming) == (
        1,
        "anthropic",
        "messages",
        "claude-x",
        True,
    )
    assert first.request.url == "https://api.anthropic.com/v1/messages"
    assert header_pairs(first.request.headers)[1] == ("x-api-key", "<redacted:sk-ant:" + first.request.headers[1][-9:])
    assert first.response is not None
    assert first.response.events is not None
    assert [event_bytes(e) for e in first.response.events] == [e.data for e in streamed().response.events]  # type: ignore[union-attr]
    assert first.timings.ttfb_ms == 12.5
    assert (second.operation, second.streaming, second.request.body) == ("list_models", False, None)
    assert second.response is not None
    assert second.response.body is not None
    assert body_bytes(second.response.body) == b'{"ok":true}'


def test_failures_and_odd_bodies_are_kept_with_notes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "c.json"
    broken = exchange(request({"model": "m", "messages": []}), response(b"<html>oops", content_type="application/json"))
    refused = exchange(request({"model": "m", "messages": []}), None, error="connection refused")
    with caplog.at_level(logging.WARNING):
        summary = record(path, broken, refused, keep_unanswered=True)
    assert "1 failed" in summary
    first, second = load_cassette(path).exchanges
    assert first.response is not None
    assert first.response.body == TextBody(text="<html>oops")
    assert first.notes[0].startswith("response body not valid JSON")
    assert "not valid JSON" in caplog.text
    assert (second.response, second.error) == (None, "connection refused")


def test_the_writer_survives_exchanges_it_cannot_convert(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "c.json"
    odd = exchange(request({"messages": []}), response(events=("not an event",)))  # type: ignore[arg-type]
    hopeless = RawExchange(odd.request, None, None, "not a datetime", None, None)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        record(path, odd, hopeless, streamed())
    first, last = load_cassette(path).exchanges
    assert (first.id, first.request.method, first.request.url) == (1, "POST", "https://api.anthropic.com/v1/messages")
    assert first.notes[0].startswith("could not be converted")
    assert (last.id, last.streaming) == (3, True)
    assert "could not record an exchange" in caplog.text


def test_recording_into_an_existing_cassette_appends(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, streamed("one"))
    assert record(path, streamed("two")).startswith("recorded 1 exchange to")
    assert [e.id for e in load_cassette(path).exchanges] == [1, 2]


def test_a_leftover_journal_is_merged_on_load_and_recovered_on_open(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, streamed("one"))
    writer = CassetteWriter.open(path, Redactor())
    writer.add(streamed("two"))
    _wait_for_lines(journal_path(path), 2)
    journal_path(path).with_suffix(".keep").write_bytes(journal_path(path).read_bytes())
    writer.close()
    journal_path(path).with_suffix(".keep").rename(journal_path(path))  # as if killed before deleting it
    with journal_path(path).open("ab") as handle:
        handle.write(b'{"id": 3, "unfinished')  # the write a kill interrupted
    assert [e.id for e in load_cassette(path).exchanges] == [1, 2]  # 2 is not counted twice
    record(path, streamed("three"))
    assert [e.id for e in load_cassette(path).exchanges] == [1, 2, 3]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"llmproxy_cassette": 1,\n "exchanges": [}', "invalid JSON at line 2, column 16"),
        (b'{"exchanges": []}', "not an llmproxy cassette"),
        (b'{"llmproxy_cassette": 2, "exchanges": []}', "unsupported cassette version 2"),
        (
            b'{"llmproxy_cassette": "1", "exchanges": []}',
            r'\$.llmproxy_cassette: expected the version number 1, got the string "1"$',
        ),
        (
            b'{"llmproxy_cassette": 1, "exchanges": [{"id": "1", "request": {"method": "GET", "url": "/", '
            b'"http_version": "HTTP/1.1", "headers": []}, "timings": {"started_at": "2026-05-01T12:00:00Z"}}]}',
            r'exchange 1: \$.exchanges\[0\].id: expected a number, got the string "1"$',
        ),
        (
            b'{"llmproxy_cassette": 1, "exchanges": [{"id": 4, "request": {"method": "GET"}, "timings": {}}]}',
            r"exchange 4: \$.exchanges\[0\].request.url: Field required",
        ),
    ],
)
def test_bad_files_say_what_is_wrong_where(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(content)
    with pytest.raises(CassetteError, match=message):
        load_cassette(path)
    with pytest.raises(CassetteError, match=message):
        CassetteWriter.open(path, Redactor())


def test_missing_directories_are_made(tmp_path: Path) -> None:
    record(tmp_path / "new" / "dir" / "c.json")
    assert load_cassette(tmp_path / "new" / "dir" / "c.json").exchanges == []


def test_a_run_that_never_started_leaves_no_cassette_behind(tmp_path: Path) -> None:
    CassetteWriter.open(tmp_path / "c.json", Redactor()).close()  # e.g. the port was in use
    assert list(tmp_path.iterdir()) == []


def test_unwritable_places_fail_before_recording(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="is a directory"):
        CassetteWriter.open(tmp_path, Redactor())
    (tmp_path / "file").touch()
    with pytest.raises(CassetteError, match="file is not a directory"):
        CassetteWriter.open(tmp_path / "file" / "c.json", Redactor())
    locked = tmp_path / "locked"
    locked.mkdir()
    with read_only(locked), pytest.raises(CassetteError, match=r"Permission denied|Read-only file system"):
        CassetteWriter.open(locked / "c.json", Redactor())


def test_a_second_recorder_on_the_same_cassette_is_refused(tmp_path: Path) -> None:
    writer = CassetteWriter.open(tmp_path / "c.json", Redactor())
    try:
        with pytest.raises(CassetteError, match="another recording"):
            CassetteWriter.open(tmp_path / "c.json", Redactor())
    finally:
        writer.close()


def test_fifty_threads_adding_at_once(tmp_path: Path) -> None:
    writer = CassetteWriter.open(tmp_path / "c.json", Redactor())
    barrier = threading.Barrier(50)

    def add(n: int) -> None:
        barrier.wait()
        writer.add(streamed(f"thread {n}"))

    threads = [threading.Thread(target=add, args=(n,)) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert writer.close().exchanges == 50
    exchanges = load_cassette(tmp_path / "c.json").exchanges
    assert sorted(e.request.body.json_["messages"][0]["content"] for e in exchanges) == sorted(  # type: ignore[union-attr]
        f"thread {n}" for n in range(50)
    )
    assert all(e.response is not None and len(e.response.events or []) == 2 for e in exchanges)


def test_fifty_async_tasks_adding_from_the_event_loop(tmp_path: Path) -> None:
    writer = CassetteWriter.open(tmp_path / "c.json", Redactor())

    async def one(n: int) -> None:
        await asyncio.sleep(0)
        writer.add(streamed(f"task {n}"))

    async def main() -> None:
        await asyncio.gather(*(one(n) for n in range(50)))

    asyncio.run(main())
    writer.close()
    assert len(load_cassette(tmp_path / "c.json").exchanges) == 50


CHILD = """
import sys, time
from pathlib import Path
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from tests.cassette.test_store import streamed
writer = CassetteWriter.open(Path(sys.argv[1]), Redactor())
for n in range(int(sys.argv[2])):
    writer.add(streamed(f"turn {n}"))
print("added", flush=True)
time.sleep(60)
"""


def test_kill_9_loses_nothing_that_was_journalled(tmp_path: Path) -> None:
    path, count = tmp_path / "c.json", 20
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(count)], cwd=ROOT, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == b"added\n"
        _wait_for_lines(journal_path(path), count + 1)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()  # type: ignore[union-attr]
    assert not path.exists()
    exchanges = load_cassette(path).exchanges
    assert [e.request.body.json_["messages"][0]["content"] for e in exchanges] == [f"turn {n}" for n in range(count)]  # type: ignore[union-attr]
    record(path)  # the next recording folds the journal into the cassette
    assert not journal_path(path).exists()
    assert len(load_cassette(path).exchanges) == count


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    bodies=st.lists(
        st.binary(max_size=60) | st.builds(orjson.dumps, st.dictionaries(st.text(max_size=5), st.integers(0, 9))),
        max_size=4,
    ),
    events=st.lists(st.binary(max_size=40), max_size=4),
)
def test_store_then_load_gives_the_redacted_bytes_back(
    tmp_path: Path, bodies: list[bytes], events: list[bytes]
) -> None:
    path = tmp_path / "round.json"
    path.unlink(missing_ok=True)
    redactor = Redactor()
    raw_events = tuple(RawEvent(float(i), data) for i, data in enumerate(events))
    sent = [
        exchange(
            request(body, path="/anything", host="example.test"),
            response(events=raw_events, content_type="text/event-stream"),
        )
        for body in bodies
    ]
    record(path, *sent, redactor=redactor)
    loaded = load_cassette(path).exchanges
    assert len(loaded) == len(sent)
    for raw, stored in zip(sent, loaded, strict=True):
        assert stored.response is not None
        assert stored.response.events is not None
        assert [event_bytes(e) for e in stored.response.events] == [redactor.data(e) for e in events]
        body = stored.request.body
        if isinstance(body, JsonBody):
            assert body.json_ == redactor.json(orjson.loads(raw.request.body))
        else:
            assert (body_bytes(body) if body is not None else b"") == redactor.data(raw.request.body)


def _wait_for_lines(path: Path, lines: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            return
        time.sleep(0.01)
    raise AssertionError(f"{path} never reached {lines} lines")


def test_the_cassette_written_as_it_goes_is_byte_for_byte_the_encoded_one(tmp_path: Path) -> None:
    exchanges = [{"id": 1, "a": [1, {"b": "x\ny"}], "c": {}}, {"id": 2, "e": [], "f": "é"}]
    for count in (0, 1, 2):
        pending = PendingCassette(tmp_path / f"c{count}.json", exchanges[:count])
        pending.commit()
        assert (tmp_path / f"c{count}.json").read_bytes() == encode_cassette(exchanges[:count])
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
