"""Properties of pricing: costs add up across calls, and each provider's cached tokens are priced once."""

from datetime import UTC, datetime
from decimal import Decimal

import genai_prices
import orjson
from hypothesis import example, given
from hypothesis import strategies as st

from llmproxy.model import Provider, Usage
from llmproxy.pricing import PriceBook, Priced
from llmproxy.providers.registry import CHAT_CODECS

AT = datetime(2026, 6, 1, tzinfo=UTC)
BOOK = PriceBook()
MTOK = Decimal(10**6)
counts = st.integers(min_value=0, max_value=150_000)  # below the long-context tiers, where prices are linear


def _usd(usage: Usage, model: str, provider: Provider) -> Decimal:
    cost = BOOK.cost(usage, model, at=AT, provider=provider)
    assert isinstance(cost, Priced)
    return cost.usd


@given(st.lists(st.tuples(counts, counts, counts, counts), min_size=1, max_size=8))
def test_costs_are_additive_across_calls(calls: list[tuple[int, int, int, int]]) -> None:
    usages = [Usage(u + r + w, o, cache_read_tokens=r, cache_write_tokens=w) for u, r, w, o in calls]
    total = Usage(
        sum(u.input_tokens for u in usages),
        sum(u.output_tokens for u in usages),
        cache_read_tokens=sum(u.cache_read_tokens for u in usages),
        cache_write_tokens=sum(u.cache_write_tokens for u in usages),
    )
    model = "claude-haiku-4-5"
    assert sum(_usd(u, model, Provider.ANTHROPIC) for u in usages) == _usd(total, model, Provider.ANTHROPIC)


@given(uncached=counts, read=counts, write=counts, output=counts)
def test_anthropic_counts_cache_tokens_apart_from_input(uncached: int, read: int, write: int, output: int) -> None:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [],
        "stop_reason": "end_turn",
        "usage": {
            "input_tokens": uncached,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
            "output_tokens": output,
        },
    }
    usage = CHAT_CODECS["anthropic-messages"].decode_response(orjson.dumps(body)).usage
    assert usage is not None
    assert usage.input_tokens == uncached + read + write  # added in once, never twice
    expected = (uncached * 1 + read * Decimal("0.1") + write * Decimal("1.25") + output * 5) / MTOK
    assert _usd(usage, "claude-haiku-4-5", Provider.ANTHROPIC) == expected
    assert usage.cache_read_tokens <= usage.input_tokens  # a hit ratio never above 100%


@given(prompt=counts, data=st.data(), output=counts)
def test_openai_counts_cached_tokens_inside_prompt_tokens(prompt: int, data: st.DataObject, output: int) -> None:
    cached = data.draw(st.integers(min_value=0, max_value=prompt))
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }
    usage = CHAT_CODECS["openai-chat"].decode_response(orjson.dumps(body)).usage
    assert usage is not None
    assert (usage.input_tokens, usage.cache_read_tokens) == (prompt, cached)
    expected = ((prompt - cached) * Decimal("0.15") + cached * Decimal("0.075") + output * Decimal("0.6")) / MTOK
    assert _usd(usage, "gpt-4o-mini", Provider.OPENAI) == expected


@given(prompt=counts, data=st.data(), output=counts)
def test_gemini_counts_cached_content_inside_the_prompt(prompt: int, data: st.DataObject, output: int) -> None:
    cached = data.draw(st.integers(min_value=0, max_value=prompt))
    body = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "cachedContentTokenCount": cached,
            "totalTokenCount": prompt + output,
        },
    }
    usage = CHAT_CODECS["gemini-generate"].decode_response(orjson.dumps(body)).usage
    assert usage is not None
    assert (usage.input_tokens, usage.cache_read_tokens) == (prompt, cached)
    expected = ((prompt - cached) * Decimal("0.3") + cached * Decimal("0.03") + output * Decimal("2.5")) / MTOK
    assert _usd(usage, "gemini-2.5-flash", Provider.GEMINI) == expected


@given(
    uncached=st.integers(0, 300_000),
    read=st.integers(0, 300_000),
    write=st.integers(0, 50_000),
    data=st.data(),
    output=st.integers(0, 50_000),
    model=st.sampled_from(
        [
            ("claude-sonnet-4-5", Provider.ANTHROPIC),
            ("claude-opus-4-8", Provider.ANTHROPIC),
            ("gpt-5.5", Provider.OPENAI),
            ("gemini-2.5-pro", Provider.GEMINI),
        ]
    ),
)
def test_every_figure_is_the_librarys_own_across_tiers(
    uncached: int, read: int, write: int, data: st.DataObject, output: int, model: tuple[str, Provider]
) -> None:
    """Above and below the long-context tiers, with 1-hour cache writes."""
    name, provider = model
    hour = data.draw(st.integers(0, write))
    usage = Usage(
        uncached + read + write, output, cache_read_tokens=read, cache_write_tokens=write, cache_write_1h_tokens=hour
    )
    library = genai_prices.calc_price(
        genai_prices.Usage(
            input_tokens=usage.input_tokens,
            output_tokens=output,
            cache_read_tokens=read,
            cache_write_tokens=write,
            cache_write_1h_tokens=hour,
        ),
        name,
        genai_request_timestamp=AT,
    )
    ours = BOOK.cost(usage, name, at=AT, provider=provider)
    assert isinstance(ours, Priced)
    assert (ours.usd, ours.input_usd, ours.output_usd) == (
        library.total_price,
        library.input_price,
        library.output_price,
    )


DATES = (datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 4, 1, tzinfo=UTC), AT)  # a price change between the first two
CALLS = st.tuples(
    st.builds(Usage, st.integers(0, 300_000), st.integers(0, 5_000), estimated=st.booleans()),
    st.sampled_from(["claude-sonnet-4-6", "gpt-4o", "gemini-2.5-pro", "no-such-model", None]),
    st.sampled_from([None, "https://api.deepseek.com/v1/chat/completions", "https://chatgpt.com/backend-api/codex"]),
    st.sampled_from([Provider.ANTHROPIC, Provider.OPENAI, Provider.GEMINI, Provider.OLLAMA, None]),
)


@given(st.lists(CALLS, min_size=1, max_size=8))
@example([(Usage(250_000, 1000), "claude-sonnet-4-6", None, Provider.ANTHROPIC)])
def test_a_book_prices_each_call_as_a_fresh_book_does_whatever_it_priced_before(
    calls: list[tuple[Usage, str | None, str | None, Provider | None]],
) -> None:
    """A book remembers what it priced (by the price in force, the model, vendor and URL, and the usage): a call
    priced again, on another date, by another vendor or URL, costs what a book that priced nothing says."""
    book = PriceBook()
    for usage, model, url, provider in calls * 2:
        for at in DATES:
            fresh = PriceBook().cost(usage, model, at=at, url=url, provider=provider)
            assert book.cost(usage, model, at=at, url=url, provider=provider) == fresh
