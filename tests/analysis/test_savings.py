"""What a signal's saving is measured in: the affected call's own prices."""

from dataclasses import replace
from pathlib import Path

from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.savings import Savings
from llmproxy.analysis.sources import Recorded
from llmproxy.model import Usage
from llmproxy.pricing import PriceBook, Priced
from tests.analysis.reports import ROOT

BOOK = PriceBook()


def sized(usage: Usage, model: str = "claude-sonnet-4-5") -> RecordedCall:
    call = Recorded([ROOT / Path("cassettes/report/output-token-bloat.json")], BOOK).calls[0]
    cost = BOOK.cost(usage, model, at=call.started_at, vendor=call.vendor, url=call.url)
    return replace(call, model=model, usage=usage, cost=cost)


def test_answer_tokens_are_saved_at_the_calls_own_output_rate() -> None:
    short, long = (
        sized(Usage(input_tokens=1_000, output_tokens=400)),
        sized(Usage(input_tokens=300_000, output_tokens=400)),
    )
    assert isinstance(short.cost, Priced)
    assert isinstance(long.cost, Priced)
    assert Savings(BOOK).output(short, 100) == short.cost.output_usd / 4
    assert Savings(BOOK).output(long, 100) == long.cost.output_usd / 4
    assert long.cost.output_usd > short.cost.output_usd  # above 200k input tokens, output costs more too


def test_nothing_is_saved_on_a_call_that_could_not_be_priced() -> None:
    assert Savings(BOOK).output(sized(Usage(input_tokens=10, output_tokens=400), model="house-model-7"), 100) == 0
