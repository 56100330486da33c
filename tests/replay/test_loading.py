"""A replay's cassettes are read on a thread of their own once its proxy listens: a request waits only for the
exchanges it could match, and a cassette found broken part-way still fails the run before anything runs in it.

A named pipe stands for a cassette whose reading is not over: what is written to it so far is all a reader
can have read."""

import os
import threading
from contextlib import suppress
from pathlib import Path

import pytest

from llmproxy.cassette.recorded import load_recorded
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import ReplayHit
from llmproxy.cassette.store import CassetteWriter
from llmproxy.errors import CassetteError
from llmproxy.plan import replay_plan
from llmproxy.proxy_session import Session
from llmproxy.session import Listening, replaying
from tests.cassette.factory import agent_session, exchange, request, response

GUARD = 30.0  # seconds a step may wait for the other side before the test gives up (never reached when it works)
BROKEN = b'"method": 7'  # an exchange the model refuses: what the reader finds only at the end


@pytest.fixture
def written(tmp_path: Path) -> bytes:
    """Three exchanges of an agent session, as the writer lays them out."""
    path = tmp_path / "written.json"
    writer = CassetteWriter.open(path, Redactor())
    for body in agent_session(3):
        writer.add(exchange(request(body), response()))
    writer.close()
    return path.read_bytes()


def split(data: bytes) -> tuple[bytes, bytes]:
    """The file up to the end of its first exchange, and the rest."""
    end = data.index(b"\n    }") + len(b"\n    }")
    return data[:end], data[end:]


class Pipe:
    """A named pipe the test writes a cassette into, in two parts: the second once `go_on` is set (or the guard
    runs out: a reader that waits for the whole file gets it then)."""

    def __init__(self, path: Path, head: bytes, tail: bytes) -> None:
        os.mkfifo(path)
        self.path = path
        self.go_on = threading.Event()
        self.tail_written = threading.Event()
        self._thread = threading.Thread(target=self._write, args=(head, tail), daemon=True)
        self._thread.start()

    def _write(self, head: bytes, tail: bytes) -> None:
        with self.path.open("wb", buffering=0) as pipe:
            pipe.write(head)
            self.go_on.wait(GUARD)
            self.tail_written.set()
            pipe.write(tail)

    def close(self) -> None:
        self.go_on.set()
        with suppress(OSError):  # a writer still waiting for its reader opens, and is done
            os.close(os.open(self.path, os.O_RDONLY | os.O_NONBLOCK))
        self._thread.join(GUARD)


def test_a_request_is_answered_before_the_cassette_is_read_whole(tmp_path: Path, written: bytes) -> None:
    pipe = Pipe(tmp_path / "c.json", *split(written))
    try:
        session = Session.of(replay_plan([pipe.path]))
        assert session.replay is not None
        index = session.replay.state.value.index
        assert index.recorded.has(0)  # read while the rest is not written yet
        hit = index.take(index.recorded.request(0), "anthropic")
        assert isinstance(hit, ReplayHit)
        assert hit.exchange.id == 1
        assert not pipe.tail_written.is_set()  # answered from what was read so far
        pipe.go_on.set()
        session.loaded()
        assert len(index.recorded) == 3
        session.close()
    finally:
        pipe.close()


def test_a_cassette_broken_part_way_answers_nothing_it_has_not_read_and_fails_as_at_once(
    tmp_path: Path, written: bytes
) -> None:
    cassette = tmp_path / "c.json"
    head, tail = split(written)
    cassette.write_bytes(head + tail.replace(b'"method": "POST"', BROKEN, 1))
    with pytest.raises(CassetteError) as at_once:
        load_recorded(cassette)
    assert "exchange 2" in str(at_once.value)
    session = Session.of(replay_plan([cassette]))
    assert session.replay is not None
    index = session.replay.state.value.index
    assert index.recorded.has(0)  # read before the broken one
    asked = index.recorded.request(0).model_copy(update={"url": "https://api.anthropic.com/v1/other"})
    with pytest.raises(CassetteError) as unanswered:  # not a miss: the exchanges it could match were not all read
        index.take(asked, "anthropic")
    with pytest.raises(CassetteError) as then:
        session.loaded()
    assert str(then.value) == str(unanswered.value) == str(at_once.value)
    session.close()  # its summary, as far as the cassette was read


def test_a_session_fails_to_start_on_a_cassette_broken_part_way(tmp_path: Path, written: bytes) -> None:
    cassette = tmp_path / "c.json"
    head, tail = split(written)
    cassette.write_bytes(head + tail.replace(b'"method": "POST"', BROKEN, 1))
    entered = False
    wrong = r"exchange 2: \$\.exchanges\[1\]\.request\.method"
    with pytest.raises(CassetteError, match=wrong), replaying(cassette, listening=Listening(ca_directory=tmp_path)):
        entered = True
    assert not entered
