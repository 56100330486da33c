"""A listing's glance at a stage's reply is read off the journal's capture, nothing rebuilt; it must show what
the glance at the exchange rebuilt whole shows, and what the whole conversion stores (the redacted URL, the
status, the time): for every chat API, its answers as bodies and as streams, errors, a body that is not JSON,
a model with a key in it, a dropped connection and no answer at all. The listing's row of it, written straight as
JSON, is what the `JournalSummary` model of the same values dumps."""

import dataclasses
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmproxy.cassette.files import read_exchanges
from llmproxy.cassette.history import inflate
from llmproxy.cassette.raw import raw_request
from llmproxy.cassette.redact import Redactor
from llmproxy.chain.incoming import Door, Incoming
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.chain.stage import Context
from llmproxy.chain.taps.journal import JournalTap, _plain_glance, _replied, glance
from llmproxy.control.api import BASE, control_api
from llmproxy.control.auth import Access
from llmproxy.control.models import JournalSummary, TokenUsage
from llmproxy.control.rows import Rows
from llmproxy.journal import Entry, Journal, Source
from llmproxy.model.exchange import RawRequest
from llmproxy.plan import replay_plan
from llmproxy.pricing import PriceBook, Priced
from llmproxy.proxy_session import Session
from tests.control.test_answered import KEY, journal
from tests.samples import CHAT, Sample

ROOT = Path(__file__).parents[2]


def dropped(sample: Sample) -> Entry:
    """The sample's request answered by a dropped connection."""
    tap = JournalTap(Journal(1), Redactor())
    body = orjson.dumps(sample.body)
    raw = RawRequest("POST", "https", sample.host, 443, sample.path, "HTTP/1.1", (), body, None)
    tap.reply(Incoming(raw, Door.PROXY), Reply(200, (("content-type", "application/json"),), b"{}", drop=True))
    (entry,) = tap.journal.read()
    return entry


@pytest.mark.parametrize("sample", CHAT, ids=[sample.name for sample in CHAT])
@pytest.mark.parametrize("model", ["gpt-4o", f"model-{KEY}"])
def test_a_glance_read_off_the_capture_shows_what_the_whole_reading_shows(sample: Sample, model: str) -> None:
    entries = [*journal(sample, model), dropped(sample)]
    off_the_capture = 0
    for entry in entries:
        reader: Any = entry._reader
        capture = entry._capture
        off_the_capture += reader.rebuild is _replied and _plain_glance(capture, reader) is not None
        assert entry.glance == glance(reader.rebuild(capture), entry.redactor), entry.seq
        exchange = entry.exchange
        assert entry.glance.url == exchange.request.url
        assert KEY not in entry.glance.url
        assert KEY not in (entry.glance.model or "")
        assert entry.glance.at == exchange.timings.started_at
        assert entry.glance.status == (exchange.response.status if exchange.response is not None else None)
        rows = Rows(1)  # its own: the dropped entry is of a journal of its own, numbered from 1 too
        row = rows.of(entry)
        dumped = summarised(entry).model_dump(mode="json", by_alias=True, exclude_none=True)
        assert (row, list(row)) == (dumped, list(dumped))  # the same values, the same order
        assert orjson.dumps(row) == orjson.dumps(dumped)
        assert rows.event(entry) == f"event: entry\nid: {entry.seq}\ndata: ".encode() + orjson.dumps(dumped) + b"\n\n"
    assert off_the_capture > 0  # a stage's plain answers (a stream's errors, at least) were read off the capture


def summarised(entry: Entry) -> JournalSummary:
    """The listing's summary of `entry` as its model, validated: what its row must dump as."""
    glance = entry.glance
    usage = glance.usage
    cost = None
    if usage is not None and entry.source is not Source.MISSED:
        cost = PriceBook().cost(usage, glance.model, at=glance.at, vendor=glance.vendor, url=glance.url)
    return JournalSummary(
        seq=entry.seq,
        source=entry.source,
        door=entry.door,
        at=glance.at,
        method=glance.method,
        url=glance.url,
        provider=glance.provider,
        operation=glance.operation,
        model=glance.model,
        status=glance.status,
        streaming=glance.streaming,
        latency_ms=glance.latency_ms,
        ttfb_ms=glance.ttfb_ms,
        latency_recorded=glance.latency_recorded,
        usage=TokenUsage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            estimated=usage.estimated,
        )
        if usage is not None
        else None,
        cost_usd=str(cost.usd) if isinstance(cost, Priced) else None,
        unpriced=cost.reason if cost is not None and not isinstance(cost, Priced) else None,
        test_id=entry.test_id,
        error=glance.error,
        injected=list(glance.injected),
    )


REPLAYED = [ROOT / "cassettes/report/clean.json", ROOT / "cassettes/claude-code-tool-loop.json"]


@pytest.mark.parametrize("path", REPLAYED, ids=["bodies", "streams"])
def test_a_replayed_answer_is_listed_with_the_latency_it_was_recorded_with(path: Path) -> None:
    """A replay answers at once: the listing shows how long the recorded answer took (and its first byte), marked
    as recorded, not the 0 ms the replay took."""
    session = Session.of(dataclasses.replace(replay_plan([path], timing=None), journal=100))
    recorded = [exchange for exchange in inflate(read_exchanges(path)) if exchange.response is not None]
    for exchange in recorded:
        request = exchange.request
        raw = raw_request(request.method, request.url, request.http_version, request.headers, request.body)
        reply = session.chain.answer(Incoming(raw, Door.RELAY), Context(Door.RELAY, forwards=False))
        assert reply is not None
        assert reply.source is ReplySource.CASSETTE
    answer = control_api(session).handle("GET", BASE + "/journal", b"", Access.MUTATE)
    listed = answer.body["entries"]
    assert [entry["source"] for entry in listed] == ["replayed"] * len(recorded)
    shown = [(entry["latencyMs"], entry.get("ttfbMs"), entry["latencyRecorded"]) for entry in listed]
    assert shown == [(exchange.timings.total_ms, exchange.timings.ttfb_ms, True) for exchange in recorded]
