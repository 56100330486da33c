"""Pricing against the library's own figures: the same response body priced by llmproxy (codec → neutral
usage → PriceBook) and by genai-prices reading the raw wire usage itself, for each provider's cache traps."""

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import genai_prices
import orjson
import pytest

from llmproxy.errors import LlmproxyError
from llmproxy.model import Provider, Usage
from llmproxy.pricing import PriceBook, Priced, Unpriced, load_price_rules
from llmproxy.providers.registry import CHAT_CODECS

AT = datetime(2026, 6, 1, 12, tzinfo=UTC)
BOOK = PriceBook()

ANTHROPIC = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn",
    "usage": {
        "input_tokens": 100,  # the uncached part only: Anthropic counts cache reads and writes apart
        "cache_read_input_tokens": 2000,
        "cache_creation_input_tokens": 500,
        "cache_creation": {"ephemeral_5m_input_tokens": 200, "ephemeral_1h_input_tokens": 300},
        "output_tokens": 50,
    },
}
OPENAI = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    "usage": {  # prompt_tokens already includes the cached tokens
        "prompt_tokens": 3000,
        "completion_tokens": 50,
        "total_tokens": 3050,
        "prompt_tokens_details": {"cached_tokens": 2048},
    },
}
GEMINI = {
    "candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}],
    "usageMetadata": {  # promptTokenCount already includes cachedContentTokenCount
        "promptTokenCount": 3000,
        "candidatesTokenCount": 50,
        "cachedContentTokenCount": 2048,
        "totalTokenCount": 3050,
    },
    "modelVersion": "gemini-2.5-flash",
}
CASES = [
    ("anthropic-messages", ANTHROPIC, "anthropic", "default", Provider.ANTHROPIC, "claude-sonnet-4-5"),
    ("openai-chat", OPENAI, "openai", "chat", Provider.OPENAI, "gpt-4o"),
    ("gemini-generate", GEMINI, "google", "default", Provider.GEMINI, "gemini-2.5-flash"),
]


@pytest.mark.parametrize(("codec", "body", "vendor", "flavor", "provider", "model"), CASES, ids=lambda v: str(v)[:20])
def test_cache_reads_and_writes_cost_what_the_library_says(
    codec: str, body: dict[str, object], vendor: str, flavor: str, provider: Provider, model: str
) -> None:
    usage = CHAT_CODECS[codec].decode_response(orjson.dumps(body)).usage
    assert usage is not None
    ours = BOOK.cost(usage, model, at=AT, provider=provider)
    theirs = genai_prices.extract_usage(body, provider_id=vendor, api_flavor=flavor).calc_price(
        genai_request_timestamp=AT
    )
    assert isinstance(ours, Priced)
    assert ours.usd == theirs.total_price
    assert ours.usd > 0
    assert (ours.vendor, ours.estimated) == (vendor, False)


def test_anthropic_cache_tokens_are_added_to_input_once() -> None:
    usage = CHAT_CODECS["anthropic-messages"].decode_response(orjson.dumps(ANTHROPIC)).usage
    assert usage == Usage(
        100 + 2000 + 500, 50, cache_read_tokens=2000, cache_write_tokens=500, cache_write_1h_tokens=300
    )
    # by hand, at claude-sonnet-4-5's $3 input, $0.30 cache read, $3.75 5-minute write, $6 1-hour write, $15 output
    by_hand = (
        100 * Decimal(3) + 2000 * Decimal("0.3") + 200 * Decimal("3.75") + 300 * Decimal(6) + 50 * Decimal(15)
    ) / 10**6
    assert BOOK.cost(usage, "claude-sonnet-4-5", at=AT, provider=Provider.ANTHROPIC).usd == by_hand  # type: ignore[union-attr]


def test_one_hour_cache_writes_cost_more_than_five_minute_ones() -> None:
    five = BOOK.cost(Usage(1000, 0, cache_write_tokens=1000), "claude-opus-4-5", at=AT, provider=Provider.ANTHROPIC)
    hour = BOOK.cost(
        Usage(1000, 0, cache_write_tokens=1000, cache_write_1h_tokens=1000),
        "claude-opus-4-5",
        at=AT,
        provider=Provider.ANTHROPIC,
    )
    assert isinstance(five, Priced)
    assert isinstance(hour, Priced)
    assert (five.usd, hour.usd) == (Decimal("0.00625"), Decimal("0.01"))


def test_long_context_tier_prices_every_token_at_the_tier_rate() -> None:
    short = BOOK.cost(Usage(200_000, 0), "gemini-2.5-pro", at=AT, provider=Provider.GEMINI)
    long = BOOK.cost(Usage(200_001, 0), "gemini-2.5-pro", at=AT, provider=Provider.GEMINI)
    assert isinstance(short, Priced)
    assert isinstance(long, Priced)
    assert short.usd == Decimal("0.25")  # $1.25 / MTok
    assert long.usd == Decimal("200001") * Decimal("2.5") / 10**6  # crossing 200k: all tokens at $2.50


def test_prices_follow_the_date_of_the_call() -> None:
    usage = Usage(250_000, 1000)
    before = BOOK.cost(usage, "claude-sonnet-4-6", at=datetime(2026, 3, 1, tzinfo=UTC), provider=Provider.ANTHROPIC)
    after = BOOK.cost(usage, "claude-sonnet-4-6", at=datetime(2026, 4, 1, tzinfo=UTC), provider=Provider.ANTHROPIC)
    assert isinstance(before, Priced)
    assert isinstance(after, Priced)
    for moment, ours in ((datetime(2026, 3, 1, tzinfo=UTC), before), (datetime(2026, 4, 1, tzinfo=UTC), after)):
        library = genai_prices.calc_price(
            genai_prices.Usage(input_tokens=250_000, output_tokens=1000),
            "claude-sonnet-4-6",
            provider_id="anthropic",
            genai_request_timestamp=moment,
        )
        assert ours.usd == library.total_price
    assert before.usd > after.usd  # the long-context surcharge ended on 2026-03-13


def test_the_vendor_comes_from_the_url_before_the_api_family() -> None:
    cost = BOOK.cost(
        Usage(1000, 10),
        "deepseek-chat",
        at=AT,
        url="https://api.deepseek.com/v1/chat/completions",
        provider=Provider.OPENAI,
    )
    assert isinstance(cost, Priced)
    assert cost.vendor == "deepseek"


def test_unknown_and_local_models_are_unpriced_never_zero() -> None:
    unknown = BOOK.cost(Usage(1000, 10), "no-such-model-xyz", at=AT, provider=Provider.ANTHROPIC)
    local = BOOK.cost(Usage(1000, 10), "llama3", at=AT, url="http://127.0.0.1:11434/api/chat", provider=Provider.OLLAMA)
    nameless = BOOK.cost(Usage(1000, 10), None, at=AT, provider=Provider.OPENAI)
    assert all(isinstance(cost, Unpriced) for cost in (unknown, local, nameless))
    assert "no price" in unknown.reason  # type: ignore[union-attr]


def test_plan_billed_and_estimated_usage_are_marked_estimates() -> None:
    codex = BOOK.cost(
        Usage(1000, 10), "gpt-5", at=AT, url="https://chatgpt.com/backend-api/codex/responses", provider=Provider.OPENAI
    )
    guessed = BOOK.cost(Usage(1000, 10, estimated=True), "gpt-5", at=AT, provider=Provider.OPENAI)
    exact = BOOK.cost(Usage(1000, 10), "gpt-5", at=AT, provider=Provider.OPENAI)
    assert isinstance(codex, Priced)
    assert isinstance(guessed, Priced)
    assert isinstance(exact, Priced)
    assert (codex.estimated, guessed.estimated, exact.estimated) == (True, True, False)
    assert codex.note is not None
    assert "plan" in codex.note


def test_a_prices_file_adds_models_and_overrides_by_date(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        orjson.dumps(
            {
                "prices": [
                    {
                        "model": "my-finetune",
                        "vendor": "openai",
                        "input_mtok": "2",
                        "output_mtok": 8,
                        "cache_read_mtok": "0.5",
                    },
                    {"model": "gpt-4o", "since": "2026-07-01", "input_mtok": "1", "output_mtok": "4"},
                ]
            }
        ).decode()
    )
    book = PriceBook(load_price_rules(path))
    added = book.cost(Usage(1000, 100, cache_read_tokens=400), "my-finetune", at=AT, provider=Provider.OPENAI)
    assert isinstance(added, Priced)
    assert added.usd == (600 * 2 + 400 * Decimal("0.5") + 100 * 8) / Decimal(10**6)
    assert added.basis.startswith("prices file: prices.json")
    library = book.cost(Usage(1000, 100), "gpt-4o", at=AT, provider=Provider.OPENAI)
    overridden = book.cost(Usage(1000, 100), "gpt-4o", at=datetime(2026, 8, 1, tzinfo=UTC), provider=Provider.OPENAI)
    assert isinstance(library, Priced)
    assert isinstance(overridden, Priced)
    assert library.basis.startswith("genai-prices")
    assert overridden.usd == Decimal("0.0014")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"prices": [{"model": "m", "input_mtok": "cheap"}]}', "$.prices[0].input_mtok"),
        ('{"prices": [{"model": "m", "inptu_mtok": "1"}]}', "$.prices[0].inptu_mtok"),
        ("{", "prices.json"),
    ],
)
def test_a_bad_prices_file_names_the_place(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "prices.json"
    path.write_text(content)
    with pytest.raises(LlmproxyError, match=message.replace("$", r"\$").replace("[", r"\[").replace("]", r"\]")):
        load_price_rules(path)
