"""The tool-call and cost gates over the journal read each exchange for its model, usage and tool calls alone
(`journal_calls.answered_calls`), and judge exactly as over the whole conversion (`journal_calls.recorded`):
the same calls, in the same order, with the same facts, and the same verdicts — for every chat API, its answers
as bodies and as streams, tool calls, usage, errors, answers without usage, and secrets in the arguments."""

import dataclasses
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmproxy.analysis import gates
from llmproxy.analysis.answered import AnsweredCall
from llmproxy.analysis.build import Selection, select
from llmproxy.analysis.coverage import Coverage
from llmproxy.analysis.sources import SourceSummary
from llmproxy.cassette.stream_capture import StreamCapture, with_events
from llmproxy.chain.incoming import Door, Incoming
from llmproxy.chain.reply import Reply, header
from llmproxy.chain.taps.journal import JournalTap
from llmproxy.control.at_rest import journal_of
from llmproxy.control.journal_calls import Reader, answered_calls, recorded
from llmproxy.journal import Entry, Query
from llmproxy.model import Completion, ErrorKind, ToolCall
from llmproxy.model.exchange import RawEvent, RawExchange, RawRequest, RawResponse
from llmproxy.plan import mock_plan
from llmproxy.pricing import PriceBook
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect, with_body
from llmproxy.proxy_session import Session
from tests.golden.cases import CASES
from tests.samples import CHAT, Sample

KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8" * 3  # key-shaped: redacted wherever it shows
ANSWERS: dict[str, Completion] = {
    **CASES,
    "secret_arguments": replace(
        CASES["tool_call"], tool_calls=(ToolCall("call_key", "login", {"user": "ada", "password": KEY}),)
    ),
    "secret_in_text_arguments": replace(
        CASES["tool_call"], tool_calls=(ToolCall("call_note", "note", {"text": f"the key is {KEY}"}),)
    ),
    "no_usage": replace(CASES["tool_call"], usage=None),
}
BOOK = PriceBook()
EMPTY = RawRequest("GET", "https", "example.com", 443, "/", "HTTP/1.1", (), b"", None)


def journal(sample: Sample, model: str | None) -> list[Entry]:
    """The sample's request answered with every answer, as bodies or a stream as the sample asks, with errors,
    a body that is not JSON and no answer at all, each kept by a mock session's own journal tap (four tests), as
    a stage's reply or as the upstream's answer."""
    body = dict(sample.body, **({"model": model} if model is not None else {}))
    headers = (("host", sample.host), ("content-type", "application/json"), ("authorization", f"Bearer {KEY}"))
    route = detect(sample.host, sample.path, dict(headers), method="POST", scheme="https", port=443)
    assert route is not None
    route = with_body(route, body)
    codec = chat_codec(route)
    assert codec is not None, sample.name
    replies = []
    for completion in ANSWERS.values():
        if route.streaming:
            events = codec.encode_stream(completion, body)
            replies.append(Reply(200, (("content-type", codec.stream_media_type),), b"".join(events)))
        else:
            replies.append(Reply(200, (("content-type", "application/json"),), codec.encode_response(completion, body)))
    for kind in (ErrorKind.RATE_LIMIT, ErrorKind.SERVER_ERROR):
        error = codec.encode_error(kind, "try later")
        replies.append(Reply(error.status, tuple(error.headers.items()), error.body))
    replies.append(Reply(200, (("content-type", "application/json"),), b"not JSON"))
    session = Session.of(dataclasses.replace(mock_plan(None), journal=1000))
    tap = next(tap for tap in session.chain.taps if isinstance(tap, JournalTap))
    for number, reply in enumerate(replies):
        sent = (*headers, ("x-llmproxy-test-id", f"test-{number % 4}"))
        raw = RawRequest("POST", "https", sample.host, 443, sample.path, "HTTP/1.1", sent, orjson.dumps(body), None)
        if number % 2:  # answered by a stage
            tap.reply(Incoming(raw, Door.RELAY), reply)
        else:  # by the upstream: its answer as the door captured it
            assert reply.body is not None
            events = codec_events(reply) if route.streaming and reply.status < 400 else None
            answer = RawResponse(
                reply.status, "", "HTTP/1.1", reply.headers, None if events else reply.body, events, None
            )
            tap._keep(Incoming(raw, Door.RELAY), RawExchange(raw, answer, None, datetime.now(UTC), 1.0, 2.0))
    tap._keep(Incoming(raw, Door.RELAY), RawExchange(raw, None, "connection refused", datetime.now(UTC), None, None))
    assert session.journal is not None
    return session.journal.read(Query())


def codec_events(reply: Reply) -> tuple[RawEvent, ...]:
    """A stream's body cut into its wire events, as a door cuts the upstream's as it passes."""
    capture = StreamCapture(header(reply.headers, "content-type") or "", None, 0.0)
    capture.feed(reply.body or b"", 0.0)
    return with_events(RawExchange(EMPTY, RawResponse(200, "", "", (), None, None, None), None, datetime.now(UTC),
                                   None, None), capture).response.events or ()  # fmt: skip


def facts(call: Any) -> tuple[Any, ...]:
    return (
        call.source,
        call.exchange_id,
        call.started_at,
        call.provider,
        call.vendor,
        call.url,
        call.model,
        call.status,
        call.failed,
        call.usage,
        call.cost,
        call.tool_calls,
    )


def coverage(calls: list[Any], sources: list[SourceSummary]) -> Coverage:
    return Coverage.of(len(calls), 0, 0, ((source.path, source.skipped) for source in sources))


@pytest.mark.parametrize("sample", CHAT, ids=[sample.name for sample in CHAT])
@pytest.mark.parametrize("model", ["gpt-4o", None, f"model-{KEY}"])
def test_the_gates_judge_a_journal_read_for_them_as_one_converted_whole(sample: Sample, model: str | None) -> None:
    entries = journal(sample, model)
    whole = recorded(entries, BOOK)
    expected, _ = select(whole.calls, Selection())
    fast = answered_calls(entries, BOOK)
    route = detect(sample.host, sample.path, {}, method="POST", scheme="https", port=443)
    assert route is not None
    route = with_body(route, sample.body)
    codec = chat_codec(route)
    if codec is not None and (codec.read_answer is not None or route.streaming):  # else: all read whole
        assert any(isinstance(call, AnsweredCall) for call in fast.calls)
    assert [facts(call) for call in fast.calls] == [facts(call) for call in expected]
    assert [(s.path, s.exchanges, s.calls, s.skipped) for s in fast.sources] == [
        (s.path, s.exchanges, s.calls, s.skipped) for s in whole.sources
    ]
    assert coverage(fast.calls, fast.sources) == coverage(expected, whole.sources)
    for name, pattern in (("get_weather", None), ("login", "password"), ("note", "sk-proj"), ("get_weather", "Tō")):
        assert (
            gates.tool_call(fast.calls, name, pattern, 1, None).as_json()
            == gates.tool_call(expected, name, pattern, 1, None).as_json()
        )
    usage_alone = answered_calls(entries, BOOK, tool_calls=False)  # what the cost gate reads
    for price_as in (None, "gpt-4o-mini"):
        assert (
            gates.cost(fast.calls, BOOK, Decimal("0.01"), price_as, False).as_json()
            == gates.cost(usage_alone.calls, BOOK, Decimal("0.01"), price_as, False).as_json()
            == gates.cost(expected, BOOK, Decimal("0.01"), price_as, False).as_json()
        )


CASSETTES = sorted((Path(__file__).parents[2] / "cassettes").rglob("*.json"))


@pytest.mark.parametrize("path", CASSETTES, ids=[path.stem for path in CASSETTES])
def test_the_gates_judge_each_committed_cassette_read_for_them_as_one_converted_whole(path: Path) -> None:
    """Real recordings of every provider's CLI and SDK, read as `llmproxy ui` reads a cassette at rest."""
    entries = journal_of([path]).read(Query())
    whole = recorded(entries, BOOK)
    expected, _ = select(whole.calls, Selection())
    fast = answered_calls(entries, BOOK)
    assert [facts(call) for call in fast.calls] == [facts(call) for call in expected]
    assert [(s.path, s.exchanges, s.calls, s.skipped) for s in fast.sources] == [
        (s.path, s.exchanges, s.calls, s.skipped) for s in whole.sources
    ]
    names = {use.name for call in expected for use in call.tool_calls} | {"absent"}
    for name in sorted(names):
        assert (
            gates.tool_call(fast.calls, name, None, 1, None).as_json()
            == gates.tool_call(expected, name, None, 1, None).as_json()
        )
    assert (
        gates.cost(fast.calls, BOOK, Decimal("0.01"), None, False).as_json()
        == gates.cost(expected, BOOK, Decimal("0.01"), None, False).as_json()
    )
    websocket = path.name == "codex-websocket.json"  # a WebSocket's messages are read whole
    assert all(isinstance(call, AnsweredCall) is not websocket for call in fast.calls)


def test_the_cost_gates_reading_without_tool_calls_serves_no_tool_call_gate() -> None:
    """A verify reads the journal once for the gates that come after it, but the cost gate's reading has no tool
    calls: a tool-call gate after it reads them; a cost gate after a tool-call gate reads nothing again."""
    entries = journal(next(sample for sample in CHAT if sample.name == "openai-chat-body"), "gpt-4o")
    session = Session.of(dataclasses.replace(mock_plan(None), journal=1000))
    assert session.journal is not None
    for entry in entries:
        session.journal.add(entry._capture)
    reader = Reader()
    usage_alone = reader.answers(session.journal, None, None, tool_calls=False)
    read_alone = [call for call in usage_alone.calls if isinstance(call, AnsweredCall)]  # not a test read whole
    assert read_alone
    assert not any(call.tool_calls for call in read_alone)
    with_calls = reader.answers(session.journal, None, None)
    assert any(call.tool_calls for call in with_calls.calls if isinstance(call, AnsweredCall))
    assert reader.answers(session.journal, None, None, tool_calls=False) is with_calls
