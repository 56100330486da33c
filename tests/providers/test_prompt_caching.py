"""Each provider's prompt caching as its documentation states it (docs/providers.md#prompt-caching), declared
once in the provider's facts and read by both the stand-in upstream and the report: the minimum per model,
one rule for a model the tables do not name, and what the usage reports of reads and writes."""

import re
from pathlib import Path

import pytest

from llmproxy.model import Provider
from llmproxy.providers.prompt_caching import ANTHROPIC_LOOKBACK, OPENAI_STEP, UNDOCUMENTED_MINIMUM, Writes
from llmproxy.providers.registry import facts

DOCS = Path(__file__).resolve().parents[2] / "docs" / "providers.md"


@pytest.mark.parametrize(
    ("model", "provider", "minimum"),
    [
        # Anthropic's table, the same on every platform
        ("claude-opus-5-5", Provider.ANTHROPIC, 512),
        ("claude-opus-5", Provider.ANTHROPIC, 512),
        ("claude-sonnet-5-5", Provider.ANTHROPIC, 512),
        ("claude-haiku-5-5", Provider.ANTHROPIC, 512),
        ("claude-fable-5-1", Provider.ANTHROPIC, 512),
        ("claude-mythos-5", Provider.ANTHROPIC, 512),
        ("claude-opus-4-8", Provider.ANTHROPIC, 1_024),
        ("claude-sonnet-5", Provider.ANTHROPIC, 1_024),
        ("claude-sonnet-4.6", Provider.ANTHROPIC, 1_024),
        ("claude-sonnet-4-5-20250929", Provider.ANTHROPIC, 1_024),
        ("claude-sonnet-4-20250514", Provider.ANTHROPIC, 1_024),
        ("claude-opus-4-1", Provider.ANTHROPIC, 1_024),
        ("claude-opus-4-20250514", Provider.ANTHROPIC, 1_024),
        ("claude-opus-4-7", Provider.ANTHROPIC, 2_048),
        ("claude-mythos-preview", Provider.ANTHROPIC, 2_048),
        ("claude-3-5-haiku-20241022", Provider.ANTHROPIC, 2_048),
        ("claude-opus-4-6", Provider.ANTHROPIC, 4_096),
        ("claude-opus-4-5@20251101", Provider.ANTHROPIC, 4_096),
        ("claude-haiku-4-5", Provider.ANTHROPIC, 4_096),
        ("anthropic.claude-haiku-4-5-20251001-v1:0", Provider.BEDROCK, 4_096),
        ("global.anthropic.claude-opus-5-5", Provider.BEDROCK, 512),
        # retired, as last listed
        ("claude-3-7-sonnet-latest", Provider.ANTHROPIC, 1_024),
        ("claude-3-haiku-20240307", Provider.ANTHROPIC, 2_048),
        # not in the table: the largest Anthropic documents
        ("claude-opus-6", Provider.ANTHROPIC, 4_096),
        ("claude-next", Provider.ANTHROPIC, 4_096),
        # OpenAI, Azure OpenAI
        ("gpt-6.2-sol", Provider.OPENAI, 1_024),
        ("gpt-5-codex", Provider.OPENAI, 1_024),
        ("gpt-4o", Provider.AZURE, 1_024),
        # Gemini's implicit caching
        ("gemini-2.5-flash", Provider.GEMINI, 2_048),
        ("gemini-2.5-pro", Provider.GEMINI_CODE_ASSIST, 2_048),
        ("gemini-3-flash", Provider.GEMINI, 1_024),
        ("gemini-3-pro-preview", Provider.GEMINI, 4_096),
        ("gemini-3.1-pro-preview", Provider.GEMINI, 4_096),
        ("gemini-3.8-flash", Provider.GEMINI, 4_096),
        ("gemini-4-argon", Provider.GEMINI, 4_096),
        ("gemini-2.5-flash-lite", Provider.GEMINI, 4_096),  # not in the table
        ("gemini-3.1-flash-lite", Provider.GEMINI_CODE_ASSIST, 4_096),
        # an API without a prompt cache llmproxy knows
        ("llama3.2", Provider.OLLAMA, UNDOCUMENTED_MINIMUM),
        ("command-a-03-2025", Provider.COHERE, UNDOCUMENTED_MINIMUM),
    ],
)
def test_each_model_caches_from_its_providers_documented_minimum(model: str, provider: Provider, minimum: int) -> None:
    assert facts(provider).prompt_caching(model).minimum == minimum


def test_claude_caches_only_at_breakpoints_found_within_20_blocks() -> None:
    for provider in (Provider.ANTHROPIC, Provider.BEDROCK):
        rules = facts(provider).prompt_caching("claude-sonnet-4-5")
        assert (rules.writes, rules.lookback, rules.reports_writes) == (Writes.BREAKPOINTS, ANTHROPIC_LOOKBACK, True)
        assert rules.metadata == "x-anthropic-billing-header:"


@pytest.mark.parametrize(
    ("model", "step", "writes_reported"),
    [
        ("gpt-4.1", OPENAI_STEP, False),
        ("gpt-5-codex", OPENAI_STEP, False),
        ("gpt-5.5-pro", OPENAI_STEP, False),
        ("gpt-5-2025-08-07", OPENAI_STEP, False),  # a dated snapshot of GPT-5, not GPT-5.2025
        ("o3", OPENAI_STEP, False),
        ("gpt-5.6", 1, True),
        ("gpt-6.2-sol", 1, True),
    ],
)
def test_openai_reports_reads_in_steps_of_128_before_gpt_5_6_exactly_from_it(
    model: str, step: int, writes_reported: bool
) -> None:
    for provider in (Provider.OPENAI, Provider.AZURE):
        rules = facts(provider).prompt_caching(model)
        assert (rules.writes, rules.step, rules.reports_writes) == (Writes.SHARED_PREFIX, step, writes_reported)


@pytest.mark.parametrize(
    ("model", "writes"),
    [
        ("gemini-2.5-flash", Writes.SHARED_PREFIX),
        ("gemini-3-flash", Writes.SHARED_PREFIX),
        ("gemini-2.0-flash", Writes.EXPLICIT),  # before 2.5: only a cachedContents entry the client creates
        ("gemini-1.5-pro", Writes.EXPLICIT),
    ],
)
def test_gemini_caches_implicitly_from_2_5(model: str, writes: Writes) -> None:
    assert facts(Provider.GEMINI).prompt_caching(model).writes is writes


def test_the_documented_table_is_the_one_the_code_holds() -> None:
    """docs/providers.md's table, row by row, against the facts: every model it names caches from the figure
    it gives."""
    section = DOCS.read_text().split("## Prompt caching\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| ---")][1:]
    assert rows
    checked = 0
    for row in rows:
        api, models, minimum = (cell.strip() for cell in row.strip("|").split("|"))
        provider = {"Anthropic": Provider.ANTHROPIC, "OpenAI": Provider.OPENAI, "Gemini": Provider.GEMINI}[api]
        for model in re.findall(r"`([^`]+)`", models):
            assert facts(provider).prompt_caching(model).minimum == int(minimum.replace(",", "")), (api, model)
            checked += 1
    assert checked >= 30
