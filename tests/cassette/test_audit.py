"""A recording audits a request's history in parts (what is new, once the rest read cleanly): it must say
exactly what decoding the request whole says, for every codec and any document, real or broken."""

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.cassette.audit import RecordingAudit, decode_summary
from llmproxy.cassette.history import HistoryIndex, history, with_list
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.cassette.stream_redact import store_events
from llmproxy.model.exchange import RawEvent
from llmproxy.providers.anthropic import MESSAGES
from llmproxy.providers.anthropic import stream as anthropic_stream
from llmproxy.providers.audit import read_request
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.node import Parsed
from llmproxy.providers.registry import CHAT_CODECS
from tests.cassette.factory import exchange, request, response
from tests.providers.strategies import dump, fuzz_values, mutated, words_in

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _documents() -> list[Any]:
    """Every request fixture, and every request captured from a real CLI."""
    found = [json.loads(path.read_bytes()) for path in sorted((FIXTURES / "requests").glob("*/*.json"))]
    found += [json.loads(path.read_bytes())["body"] for path in sorted((FIXTURES / "captured").glob("*.json"))]
    return found


DOCUMENTS = _documents()
CODECS = list(CHAT_CODECS.values())
WORDS = words_in(DOCUMENTS)


def _in_parts(chat: ChatCodec, document: dict[str, Any], *lengths: int) -> Any:
    """Audit the requests whose histories are `document`'s first `lengths` items, each extending the one
    before, then `document` itself: what the recording says of it."""
    found = history(document)
    assert found is not None
    path, items = found
    audits, sharing = RecordingAudit(Redactor()), HistoryIndex()
    for exchange_id, length in enumerate([*lengths, len(items)], start=1):
        body = with_list(document, path, items[:length])
        _, extends = sharing.share(exchange_id, body)  # what the cassette stores: the earlier request it extends
        read = audits.read(exchange_id, chat, orjson.dumps(body), body, extends)
    return read


def _whole(chat: ChatCodec, document: dict[str, Any]) -> Any:
    return read_request(chat, orjson.dumps(document))


def test_every_codec_reads_a_real_history_in_parts_as_whole() -> None:
    checked = 0
    for document in DOCUMENTS:
        found = history(document)
        if found is None:
            continue
        items = len(found[1])
        for chat in CODECS:
            whole = _whole(chat, document)
            for length in range(items + 1):  # an earlier request of `length` items, then this one
                assert _in_parts(chat, document, length) == whole, (chat.provider, chat.operation, length)
            assert _in_parts(chat, document, *range(items)) == whole  # a turn at a time
            checked += whole.failure is None
    assert checked >= 30  # most documents decode cleanly with the codec that reads them


def test_what_the_request_holds_besides_its_history_counts_once() -> None:
    """A history the codec does not read (a Responses request with a stray `messages` list, which history
    sharing takes for its history): the opaque parts of what it does read (`input`) count once, not once per
    turn."""
    responses = CHAT_CODECS["openai-responses"]
    document = {
        "model": "gpt-5",
        "input": [{"type": "web_search_call", "id": "ws_1", "status": "completed"}],
        "messages": [{"role": "user", "content": str(turn)} for turn in range(4)],
    }
    whole = _whole(responses, document)
    assert (whole.failure, whole.opaque) == (None, 1)
    assert _in_parts(responses, document, 1, 2) == _in_parts(responses, document, 4) == whole


SMALL = [document for document in DOCUMENTS if history(document) and len(dump(document)) < 10_000]


@given(data=st.data(), document=st.sampled_from(SMALL), chat=st.sampled_from(CODECS))
def test_a_broken_history_reads_in_parts_as_whole(data: st.DataObject, document: Any, chat: ChatCodec) -> None:
    """Values anywhere replaced or removed (the history itself too): the same failure, path and excerpt, or
    the same count of opaque parts."""
    broken = orjson.loads(dump(data.draw(mutated(document, fuzz_values(WORDS)))))  # as a recording parses it
    found = history(broken) if isinstance(broken, dict) else None
    if found is None:
        return
    lengths = sorted(data.draw(st.lists(st.integers(0, len(found[1])), max_size=3)))
    assert _in_parts(chat, broken, *lengths) == _whole(chat, broken)


def test_a_recording_summary_matches_the_cassette_decoded_whole(tmp_path: Path) -> None:
    """Through the writer: an agent session with a server tool (opaque) in its second message and, from the
    fourth turn on, an image no codec reads; the run's summary says what decoding each stored request whole
    says."""
    server_tool = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}
    messages: list[Any] = [{"role": "user", "content": "search"}, {"role": "assistant", "content": [server_tool]}]
    bodies = []
    for turn in range(6):
        unreadable = [{"type": "image", "source": 7}] if turn == 3 else []
        messages.append({"role": "user", "content": [{"type": "text", "text": f"step {turn}"}, *unreadable]})
        bodies.append({"model": "claude-x", "max_tokens": 64, "messages": list(messages)})
        messages.append({"role": "assistant", "content": f"done {turn}"})
    answer = orjson.dumps({"type": "message", "role": "assistant", "content": [{"type": "text", "text": "ok"}]})
    path = tmp_path / "c.json"
    writer = CassetteWriter.open(path, Redactor())
    writer.start()
    for body in bodies:
        writer.add(exchange(request(body), response(answer)))
    summary = str(writer.close()).splitlines()[1:]
    assert summary == decode_summary(load_cassette(path).exchanges)
    assert summary[0] == "3 of 6 exchanges did not decode (recorded and served as they came): anthropic messages 3"
    assert summary[-1] == (
        "3 parts kept whole, with no neutral meaning (server tools, citations…): anthropic messages 3"
    )  # exchanges 1 to 3: the later ones did not decode


GOLDEN_STREAMS = sorted((Path(__file__).parents[1] / "golden" / "anthropic-messages").glob("*.sse"))


def _events(stream: bytes) -> list[RawEvent]:
    return [RawEvent(float(n), event + b"\n\n") for n, event in enumerate(stream.split(b"\n\n")) if event]


@pytest.mark.parametrize("path", GOLDEN_STREAMS, ids=lambda path: path.stem)
def test_a_stream_read_from_the_payloads_the_conversion_parsed_is_the_stream_decoded(path: Path) -> None:
    events = _events(path.read_bytes())
    cut_short = events[: len(events) // 2]  # a stream cut off reads as what arrived, either way
    error = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error"}}\n\n'
    failed = [*events[:3], RawEvent(9.0, error)]
    for stream in (events, cut_short, failed):
        payloads: list[Parsed] = []
        store_events(stream, "text/event-stream", Redactor(), payloads=payloads)
        assert len(payloads) == len(stream)
        assert MESSAGES.read_stream is not None
        assert MESSAGES.read_stream(payloads) == MESSAGES.decode_stream(event.data for event in stream)


def test_a_stream_not_stored_as_parsed_events_gives_no_payloads() -> None:
    payloads: list[Parsed] = []
    stream = [RawEvent(0.0, b'data: {"type":"ping"}\r\n\r\n'), RawEvent(1.0, b'data: {"type": "ping"}\n\n')]
    store_events(stream, "text/event-stream", Redactor(), payloads=payloads)
    assert payloads == []  # neither event is stored as its parsed form: the audit reads the bytes


def test_a_recording_audits_a_stream_from_the_events_it_stored_not_their_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream that reads and one that does not: the summary says what decoding the stored streams' bytes
    says, and the recording never framed one again."""
    framed: list[object] = []
    monkeypatch.setattr(anthropic_stream, "_events", lambda chunks: framed.append(chunks) or iter(()))
    body = {"model": "claude-x", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    events = _events((Path(__file__).parents[1] / "golden" / "anthropic-messages" / "reasoning.sse").read_bytes())
    broken = [*events[:2], RawEvent(2.0, b'event: message_delta\ndata: {"type":"message_delta","delta":7}\n\n')]
    path = tmp_path / "c.json"
    writer = CassetteWriter.open(path, Redactor())
    writer.start()
    for stream in (events, broken):
        writer.add(exchange(request(body), response(events=tuple(stream), content_type="text/event-stream")))
    summary = str(writer.close()).splitlines()[1:]
    assert framed == []  # no stream was framed and parsed again
    monkeypatch.undo()
    assert summary == decode_summary(load_cassette(path).exchanges)
    assert summary[0] == "1 of 2 exchanges did not decode (recorded and served as they came): anthropic messages 1"
