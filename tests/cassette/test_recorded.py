"""A cassette loaded for replay: read exchange by exchange when laid out as llmproxy writes it (whole
otherwise, alike), checked whole at load, histories rebuilt, each exchange made a model when first read."""

from pathlib import Path

import orjson
import pytest

from llmproxy.cassette import files
from llmproxy.cassette.model import Exchange
from llmproxy.cassette.recorded import load_recorded
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.errors import CassetteError
from tests.cassette.factory import agent_session, exchange, request, response, sse_events


@pytest.fixture
def written(tmp_path: Path) -> Path:
    """Six turns of an agent session (histories shared), streamed answers, as the writer lays them out."""
    path = tmp_path / "c.json"
    writer = CassetteWriter.open(path, Redactor())
    for body in agent_session(6):
        events = sse_events({"type": "content_block_delta", "text": "a\n    },\n    {"})  # the separator, as text
        writer.add(exchange(request(body), response(events=events, content_type="text/event-stream")))
    writer.close()
    return path


def dumped(exchanges: list[Exchange]) -> list[bytes]:
    return [orjson.dumps(e.model_dump(mode="json", by_alias=True, exclude={"request": {"extends"}})) for e in exchanges]


@pytest.mark.parametrize("chunk", [7, 1 << 20])  # separators straddling reads, and whole-file reads
def test_a_cassette_as_written_reads_exchange_by_exchange_as_it_reads_whole(
    written: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "CHUNK", chunk)  # tests/cassette/test_files.py: which layouts are read so
    compact = written.with_name("compact.json")
    compact.write_bytes(orjson.dumps(orjson.loads(written.read_bytes())))  # the same cassette, laid out otherwise
    whole = load_cassette(compact).exchanges
    assert dumped(load_cassette(written).exchanges) == dumped(whole)
    assert dumped(list(load_recorded(written))) == dumped(whole) == dumped(list(load_recorded(compact)))


def test_exchanges_are_made_models_only_when_read(written: Path) -> None:
    recorded = load_recorded(written)
    loaded = load_cassette(written).exchanges
    assert recorded.request(5) == loaded[5].request  # the index reads a request alone: no model kept
    assert not recorded.made(5)
    assert recorded.provider(5) == "anthropic"
    assert recorded[5] == loaded[5]
    assert recorded[5] is recorded[5]  # made once: replay keeps each reply by its exchange
    assert recorded.made(5)
    assert recorded[1:3] == loaded[1:3]


def test_a_bad_exchange_fails_the_load_saying_where(written: Path) -> None:
    text = written.read_bytes().replace(b'"method": "POST"', b'"method": 7', 1)
    written.write_bytes(text)
    wrong = r"exchange 1: \$\.exchanges\[0\]\.request\.method: expected a string, got 7"
    with pytest.raises(CassetteError, match=wrong):
        load_recorded(written)
