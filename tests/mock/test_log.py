"""The request log under load: memory keeps the latest entries and the counts, the summary lists the latest
requests and says where the rest are, and `--log FILE` keeps every entry."""

import json
import tracemalloc
from dataclasses import replace
from pathlib import Path

import orjson

from llmproxy.cassette.redact import Redactor
from llmproxy.chain import Chain, Context, Door, Incoming, Network, Stage
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.chain.stages.mock import MockStage
from llmproxy.mock import spec
from llmproxy.mock.engine import MockDecision, MockEngine, MockMiss
from llmproxy.mock.log import KEPT, SHOWN, UNREAD_BYTES, MockLog
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.base import ChatCodec
from tests.cassette.factory import request

REQUEST = Incoming(request(host="api.example.com", path="/v1/things", headers=()))
ANSWERED = MockDecision(spec.Respond(text="ok"), "expectation 1", 1)
REPLY = Reply(200, ())
MISS = MockMiss(None, ())


def test_memory_keeps_the_latest_entries_and_every_count(tmp_path: Path) -> None:
    path = tmp_path / "mock.jsonl"
    log = MockLog(Redactor(), path)
    total = 3 * KEPT + 7
    for seq in range(1, total + 1):
        if seq % 1000 == 0:
            log.missed(REQUEST, MISS)
        else:
            log.answered(REQUEST, ANSWERED, REPLY)
    summary = log.summary()
    log.close()

    assert KEPT <= len(log.entries) <= 2 * KEPT
    assert log.entries[-1]["seq"] == total
    assert [entry["seq"] for entry in log.entries] == list(range(total - len(log.entries) + 1, total + 1))
    assert (log.count, log.missed_count) == (total, total // 1000)
    lines = summary.splitlines()
    assert lines[0] == f"mock answered {total - total // 1000:,} of {total:,} requests"
    assert lines[1] == f"  … {total - SHOWN:,} earlier requests not listed (the --log file has them all)"
    assert len(lines) == 2 + SHOWN
    assert lines[-1] == f"  {total}. api.example.com (turn index -): expectation 1"
    written = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert [entry["seq"] for entry in written] == list(range(1, total + 1))


def test_the_summary_asked_once_the_log_is_closed_still_says_where_every_entry_is(tmp_path: Path) -> None:
    """The chain closes every stage before it asks for their summaries."""
    log = MockLog(Redactor(), tmp_path / "mock.jsonl")
    for _ in range(SHOWN + 1):
        log.answered(REQUEST, ANSWERED, REPLY)
    log.close()
    assert "  … 1 earlier request not listed (the --log file has them all)" in log.summary().splitlines()


def test_a_short_run_lists_every_request() -> None:
    log = MockLog(Redactor())
    log.answered(REQUEST, ANSWERED, REPLY)
    log.missed(REQUEST, MISS)
    assert log.summary().splitlines() == [
        "mock answered 1 of 2 requests",
        "  1. api.example.com (turn index -): expectation 1",
        "  2. POST api.example.com/v1/things (turn index -): missed: no expectation answers this request "
        "(none were given)",
    ]
    assert [entry["seq"] for entry in log.misses] == [2]


def chat_request(text: str, *, decodes: list[int] | None = None) -> Incoming:
    """An OpenAI chat request with one tool result since the assistant's call; `decodes` counts its decodes."""
    messages = [
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": text},
    ]
    # json, not orjson: tracemalloc counts 16 MB for the 1 MB bytes orjson gives
    body = json.dumps({"model": "gpt-5-mini", "messages": messages}).encode()
    headers = (("host", "api.openai.com"), ("content-type", "application/json"))
    raw = request(body, host="api.openai.com", path="/v1/chat/completions", headers=headers)
    return Incoming(raw) if decodes is None else Counted(raw, decodes)


class Counted(Incoming):
    """A request whose codec counts the decodes made with it."""

    __slots__ = ("counting",)

    def __init__(self, raw: RawRequest, decodes: list[int]) -> None:
        super().__init__(raw)
        codec = super().codec
        assert codec is not None
        self.counting = replace(codec, decode_request=lambda body: decodes.append(1) or codec.decode_request(body))

    @property
    def codec(self) -> ChatCodec:
        return self.counting


def test_details_are_read_from_the_request_when_the_entry_is() -> None:
    log = MockLog(Redactor())
    decodes: list[int] = []
    for _ in range(3 * KEPT):
        log.answered(chat_request("a.txt b.txt", decodes=decodes), ANSWERED, REPLY)
    assert "turn index 1" in log.summary().splitlines()[-1]
    assert decodes == []  # the summary needs no decode, nor does a run that reads nothing

    entry = log.entries[-1]
    assert len(decodes) == len(log.entries) <= 2 * KEPT  # entries trimmed away were never decoded
    assert (entry["turnIndex"], entry["latestRole"]) == (1, "tool")
    assert entry["toolResults"] == [{"name": "ls", "callId": "c1", "text": "a.txt b.txt"}]
    assert list(entry)[:10] == [
        "seq",
        "method",
        "host",
        "path",
        "provider",
        "operation",
        "stream",
        "model",
        "turnIndex",
        "latestRole",
    ]


def test_request_bodies_held_for_unread_entries_stay_within_their_budget() -> None:
    log = MockLog(Redactor())
    big = "x" * (1024 * 1024)
    tracemalloc.start()
    try:
        for _ in range(3 * UNREAD_BYTES // len(big)):
            log.answered(chat_request(big), ANSWERED, REPLY)
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < UNREAD_BYTES + 16 * len(big)  # the bodies within budget, and the entries' 2,000-character excerpts
    assert all(entry["toolResults"][0]["text"] == big[:2000] for entry in log.entries)


class Answers(Stage):
    """A stage after the mock that answers everything, as the cassette behind it does."""

    name = "replay"

    def decide(self, incoming: Incoming, context: Context) -> Reply | None:
        return Reply(200, (), b"{}", source=ReplySource.CASSETTE)


def test_what_something_after_the_mock_answered_is_no_miss_of_its_own() -> None:
    """A request no expectation matched, answered by the cassette behind the mock or sent upstream, is logged
    with what answered it — not as "missed: no expectation matched" beside the line saying it was answered;
    one nothing answers is the mock's miss."""
    log = MockLog(Redactor())
    mock = MockStage(MockEngine(spec.ExpectationsFile(expectations=())), log)
    proxy = Context(Door.PROXY)
    behind = Chain([mock, Answers()], network=Network())
    assert behind.answer(Incoming(REQUEST.raw), proxy) is not None
    assert Chain([mock], network=Network(everything=True)).answer(Incoming(REQUEST.raw), proxy) is None  # upstream
    refused = Chain([mock], network=Network()).answer(Incoming(REQUEST.raw), proxy)
    assert refused is not None
    assert refused.source is ReplySource.MISS
    assert log.summary().splitlines() == [
        "mock answered 0 of 3 requests; 2 more answered after it (cassette, upstream)",
        "  1. POST api.example.com/v1/things (turn index -): cassette",
        "  2. POST api.example.com/v1/things (turn index -): upstream",
        "  3. POST api.example.com/v1/things (turn index -): missed: no expectation answers this request "
        "(none were given)",
    ]
    assert [entry["seq"] for entry in log.misses] == [3]
    assert [entry.get("answeredBy") for entry in log.entries] == ["cassette", "upstream", None]
