"""Reading a cassette one exchange at a time (`iter_exchanges`) gives what reading it whole gives."""

import json
from collections.abc import Generator
from pathlib import Path

import orjson
import pytest

from llmproxy.cassette import files
from llmproxy.cassette.files import encode_cassette, iter_exchanges, journal_path, read_exchanges
from llmproxy.cassette.model import Exchange
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from llmproxy.errors import CassetteError
from tests.cassette.factory import exchange, request, response, sse_events


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A cassette the recorder wrote: a streamed answer, a plain one, a long body, a shared history."""
    path = tmp_path / "c.json"
    writer = CassetteWriter.open(path, Redactor())
    writer.start()
    history: list[object] = [{"role": "user", "content": "line\n" * 400}]
    events = sse_events({"type": "content_block_delta", "text": "hi"}, {"type": "message_stop"})
    writer.add(exchange(request({"model": "m", "messages": history}), response(events=events)))
    for turn in range(3):
        history = [*history, {"role": "assistant", "content": f"turn {turn}"}, {"role": "user", "content": "go"}]
        writer.add(exchange(request({"model": "m", "messages": history}), response()))
    writer.close()
    return path


def stored(path: Path) -> list[dict[str, object]]:
    return orjson.loads(path.read_bytes())["exchanges"]  # type: ignore[no-any-return]


def test_the_recorders_layout_is_read_one_exchange_at_a_time(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "CHUNK", 64)  # exchanges and the file's ending split across reads
    read, whole_file_so = _drain(files.one_by_one(recorded, Exchange.model_validate))
    assert whole_file_so  # nothing had to read the file whole
    assert read == list(iter_exchanges(recorded)) == read_exchanges(recorded)
    assert read[-1].request.extends is not None  # histories stay shared, as stored


def _drain(generator: Generator[tuple[int, Exchange], None, bool]) -> tuple[list[Exchange], bool]:
    read: list[Exchange] = []
    try:
        while True:
            read.append(next(generator)[1])
    except StopIteration as stop:
        return read, stop.value


@pytest.mark.parametrize(
    "layout",
    [
        lambda exchanges: orjson.dumps({"llmproxy_cassette": 1, "exchanges": exchanges}),
        lambda exchanges: json.dumps({"llmproxy_cassette": 1, "exchanges": exchanges}, indent=4).encode(),
        lambda exchanges: encode_cassette(exchanges).rstrip(b"\n"),
    ],
    ids=["compact", "indented by four", "no final newline"],
)
def test_any_other_layout_reads_the_same(recorded: Path, tmp_path: Path, layout: object) -> None:
    other = tmp_path / "other.json"
    other.write_bytes(layout(stored(recorded)))  # type: ignore[operator]
    assert list(iter_exchanges(other)) == read_exchanges(recorded)


def test_an_empty_cassette_has_no_exchanges(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(encode_cassette([]))
    assert list(iter_exchanges(path)) == []


def test_a_leftover_journal_is_merged(recorded: Path) -> None:
    later = {**stored(recorded)[-1], "id": 9}
    journal_path(recorded).write_bytes(b'{"llmproxy_journal": 1, "owner": "x"}\n' + orjson.dumps(later) + b"\n")
    assert [e.id for e in iter_exchanges(recorded)] == [1, 2, 3, 4, 9] == [e.id for e in read_exchanges(recorded)]


def _broken(exchanges: list[dict[str, object]], what: str) -> bytes:
    if what == "invalid exchange":
        exchanges[2] = {**exchanges[2], "request": {"method": "GET"}}
    elif what == "ids out of order":
        exchanges[2] = {**exchanges[2], "id": 1}
    data = encode_cassette(exchanges)
    return data + b"trailing" if what == "text after the end" else data


@pytest.mark.parametrize("what", ["invalid exchange", "ids out of order", "text after the end"])
def test_a_bad_file_fails_as_reading_it_whole_does(recorded: Path, what: str) -> None:
    recorded.write_bytes(_broken(stored(recorded), what))
    with pytest.raises(CassetteError) as whole:
        read_exchanges(recorded)
    read: list[Exchange] = []
    with pytest.raises(CassetteError) as streamed:
        read.extend(iter_exchanges(recorded))
    assert str(streamed.value) == str(whole.value)
    assert [e.id for e in read] == ([1, 2] if what != "text after the end" else [1, 2, 3, 4])
