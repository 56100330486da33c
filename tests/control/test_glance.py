"""A listing's glance at a stage's reply is read off the journal's capture, nothing rebuilt; it must show what
the glance at the exchange rebuilt whole shows, and what the whole conversion stores (the redacted URL, the
status, the time): for every chat API, its answers as bodies and as streams, errors, a body that is not JSON,
a model with a key in it, a dropped connection and no answer at all. The listing's summary of it, built without
validation, is what validating its own values gives."""

from typing import Any

import orjson
import pytest

from llmproxy.cassette.redact import Redactor
from llmproxy.chain.incoming import Door, Incoming
from llmproxy.chain.reply import Reply
from llmproxy.chain.taps.journal import JournalTap, glance
from llmproxy.control.api import _Prices, _summary
from llmproxy.control.models import JournalSummary
from llmproxy.journal import Entry, Journal
from llmproxy.model.exchange import RawRequest
from tests.control.test_answered import KEY, journal
from tests.samples import CHAT, Sample


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
    prices = _Prices()
    for entry in entries:
        reader: Any = entry._reader
        capture = entry._capture
        off_the_capture += reader.glanced is not None and reader.glanced(capture, entry.redactor) is not None
        assert entry.glance == glance(reader.rebuild(capture), entry.redactor), entry.seq
        exchange = entry.exchange
        assert entry.glance.url == exchange.request.url
        assert KEY not in entry.glance.url
        assert KEY not in (entry.glance.model or "")
        assert entry.glance.at == exchange.timings.started_at
        assert entry.glance.status == (exchange.response.status if exchange.response is not None else None)
        summary = _summary(entry, prices)
        validated = JournalSummary.model_validate(summary.model_dump())
        assert validated == summary
        assert summary.model_dump(mode="json", by_alias=True, exclude_none=True) == validated.model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
    assert off_the_capture > 0  # a stage's plain answers (a stream's errors, at least) were read off the capture
