"""The meter: calls numbered in the order they end, priced once with the maintained price data, an unknown
model left unpriced (never $0), a failing listener dropped without touching the traffic."""

import itertools
import threading
from datetime import UTC, datetime, tzinfo
from decimal import Decimal
from pathlib import Path

import pytest

from llmproxy.chain import Incoming
from llmproxy.chain.reply import Reply, ReplySource, text_reply
from llmproxy.chain.taps import meter as meter_tap
from llmproxy.chain.taps.meter import MeterTap
from llmproxy.meter import Answered, Call, Meter, Tokens, totals
from llmproxy.model import Completion, Provider, Usage
from llmproxy.pricing import PriceBook
from llmproxy.pricing.overrides import load_price_rules
from tests.cassette.factory import request

USAGE = Usage(input_tokens=1_000, output_tokens=200, cache_read_tokens=400)


def call(
    model: str | None = "claude-haiku-4-5", answered: Answered = Answered.HIT, usage: Usage | None = USAGE
) -> Call:
    return Call("POST", "api.anthropic.com", "/v1/messages", answered, 200, Provider.ANTHROPIC, model, usage)


def test_calls_are_numbered_priced_and_heard() -> None:
    meter, heard = Meter(), []
    meter.listen(heard.append)
    first = meter.add(call())
    expected = PriceBook().cost(USAGE, "claude-haiku-4-5", at=first.at, url=first.url, provider=Provider.ANTHROPIC)
    assert first.seq == 1
    assert first.cost_usd == expected.usd > 0  # type: ignore[union-attr]
    assert first.unpriced is None
    assert meter.add(call(answered=Answered.MOCK)).seq == 2
    assert [c.seq for c in heard] == [1, 2]


def test_an_unknown_model_is_unpriced_and_kept_out_of_the_cost() -> None:
    meter = Meter()
    priced = meter.add(call())
    unknown = meter.add(call(model="house-model-7"))
    assert unknown.cost_usd is None
    assert "house-model-7" in (unknown.unpriced or "")
    total = totals(meter.calls)
    assert total.cost_usd == priced.cost_usd
    assert total.unpriced == (unknown,)
    assert total.tokens == Tokens(input=2_000, output=400, cache_read=800)


def test_misses_and_calls_without_usage_are_not_priced() -> None:
    meter = Meter()
    missed = meter.add(call(answered=Answered.MISS, usage=None))
    assert (missed.cost_usd, missed.unpriced) == (None, None)
    assert totals(meter.calls).by_answer[Answered.MISS] == 1
    assert totals(meter.calls).cost_usd == Decimal(0)


def test_a_failing_listener_is_dropped_and_the_others_hear_on(caplog: pytest.LogCaptureFixture) -> None:
    meter, heard = Meter(), []

    def broken(_: Call) -> None:
        raise RuntimeError("boom")

    meter.listen(broken)
    meter.listen(heard.append)
    meter.add(call(usage=None))
    meter.add(call(usage=None))
    assert len(heard) == 2
    assert "a meter listener failed" in caplog.text


def test_calls_from_many_threads_get_distinct_numbers() -> None:
    meter = Meter()
    threads = [threading.Thread(target=lambda: [meter.add(call(usage=None)) for _ in range(50)]) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(c.seq for c in meter.calls) == list(range(1, 201))


@pytest.mark.parametrize("source", [ReplySource.BACKGROUND, ReplySource.RELAYED])
def test_what_is_no_model_call_is_not_metered(source: ReplySource) -> None:
    """A coding CLI's telemetry answered harmlessly, a WebSocket upgrade taken over by the relay: no call to
    count (the relay's messages are metered one by one), and no failure of the meter's tap either."""
    meter = Meter()
    tap = MeterTap(meter)
    incoming = Incoming(request(host="api.statsig.com", path="/v1/rgstr", headers=()))
    reply = text_reply(202, "", source)
    assert tap.reply(incoming, reply) is reply
    assert meter.calls == []


def test_a_price_is_kept_only_when_it_is_the_same_at_any_time(tmp_path: Path) -> None:
    book = PriceBook()
    assert book.timeless("claude-haiku-4-5", provider=Provider.ANTHROPIC)
    assert not book.timeless("claude-opus-4-6", provider=Provider.ANTHROPIC)  # a price from a date on
    prices = tmp_path / "prices.json"
    prices.write_text('{"prices": [{"model": "claude-haiku-4-5", "input_mtok": 1, "output_mtok": 2}]}')
    assert not PriceBook(load_price_rules(prices)).timeless("claude-haiku-4-5", provider=Provider.ANTHROPIC)


@pytest.mark.parametrize("model", ["claude-haiku-4-5", "claude-opus-4-6"])
def test_a_recording_served_again_and_again_is_metered_as_a_reply_made_afresh(model: str) -> None:
    """What the tap keeps of a recording (its call but the time and number, its price when it does not
    change) meters the same calls as a reply read afresh each time, whatever request it answers."""
    completion = Completion(id="msg_1", model=None, text="Hi.", usage=USAGE)
    recorded = Reply(200, (), b"{}", source=ReplySource.CASSETTE, completion=completion, shared=True)
    asked = [{"model": model, "max_tokens": 5}, {"model": "claude-sonnet-4-5", "max_tokens": 5}]
    order = [0, 0, 1, 0, 0]
    kept, fresh = Meter(), Meter()
    kept_tap, fresh_tap = MeterTap(kept), MeterTap(fresh)
    for which in order:
        kept_tap.reply(Incoming(request(asked[which])), recorded)
        fresh_tap.reply(Incoming(request(asked[which])), recorded._replace(shared=False))
    assert [call._replace(at=None) for call in kept.calls] == [call._replace(at=None) for call in fresh.calls]
    assert [call.model for call in kept.calls] == [model, model, "claude-sonnet-4-5", model, model]
    assert all(call.cost_usd is not None for call in kept.calls)


def test_a_recording_priced_by_the_date_is_priced_at_each_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    """claude-opus-4-6's long-context tier ended on 2026-03-13: the same recording served either side of it
    costs what each day's price says, not what its first serve cost."""
    days = itertools.cycle([datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 4, 1, tzinfo=UTC)])

    class Clock(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> datetime:
            return next(days)

    monkeypatch.setattr(meter_tap, "datetime", Clock)
    long = Usage(input_tokens=300_000, output_tokens=10)
    completion = Completion(id="msg_1", model="claude-opus-4-6", text="Hi.", usage=long)
    recorded = Reply(200, (), b"{}", source=ReplySource.CASSETTE, completion=completion, shared=True)
    meter = Meter()
    tap = MeterTap(meter)
    for _ in range(4):
        tap.reply(Incoming(request({"model": "claude-opus-4-6", "max_tokens": 5})), recorded)
    costs = [call.cost_usd for call in meter.calls]
    book = PriceBook()
    expected = [
        book.cost(long, "claude-opus-4-6", at=call.at, url=call.url, provider=call.provider) for call in meter.calls
    ]
    assert costs == [priced.usd for priced in expected]  # type: ignore[union-attr]
    assert costs[0] != costs[1]
    assert costs[0] == costs[2]
