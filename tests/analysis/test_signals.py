"""Each signal fires on the committed cassette made to trigger it, and no signal fires on the clean run."""

import orjson
import pytest

from llmproxy.analysis.signals import DETECTORS
from tests.analysis.reports import ROOT, report_of

SIGNALS = [detector.__name__.upper() for detector in DETECTORS]
TRIGGERS = {signal: f"cassettes/report/{signal.lower().replace('_', '-')}.json" for signal in SIGNALS}
TRIGGERS["LARGE_STATIC_CONTEXT_RESENT"] = "cassettes/report/large-static-context.json"


def test_there_are_nine_signals() -> None:
    assert len(SIGNALS) == 9


@pytest.mark.parametrize("signal", SIGNALS)
def test_the_signal_fires_on_its_cassette(signal: str) -> None:
    report = report_of(TRIGGERS[signal])
    fired = {s.id: s for s in report.signals}
    assert signal in fired, [s.id for s in report.signals]
    found = fired[signal]
    assert found.affectedCalls
    assert all(1 <= index <= report.totals.callCount for index in found.affectedCalls)
    assert found.estimatedSavingUsd is not None
    assert float(found.estimatedSavingUsd) > 0
    assert found.fix.summary
    assert found.fix.action
    assert found.recommendation


@pytest.mark.parametrize("signal", SIGNALS)
def test_the_signal_stays_quiet_on_the_clean_run(signal: str) -> None:
    report = report_of("cassettes/report/clean.json")
    assert signal not in {s.id for s in report.signals}
    assert report.verdict.grade == "A"
    assert report.verdict.rationale == "No optimisation opportunities detected."


def test_signals_are_ranked_by_urgency_then_severity() -> None:
    report = report_of("cassettes/report/repeated-system-prompt.json", "cassettes/report/unused-tool-schema.json")
    keys = [(-s.urgency, {"HIGH": 0, "MEDIUM": 1, "LOW": 2}[s.severity], s.id) for s in report.signals]
    assert keys == sorted(keys)
    weights = {"HIGH": 1.0, "MEDIUM": 0.6, "LOW": 0.3}
    for s in report.signals:
        assert s.urgency == round(weights[s.severity] * len(s.affectedCalls) / report.totals.callCount, 4)


def test_caching_advice_follows_the_provider() -> None:
    anthropic = report_of("cassettes/report/repeated-system-prompt.json")
    openai = report_of("cassettes/report/low-cache-hit-rate.json")
    (fix_a,) = [s.fix for s in anthropic.signals if s.id == "LOW_CACHE_HIT_RATE"]
    (fix_o,) = [s.fix for s in openai.signals if s.id == "LOW_CACHE_HIT_RATE"]
    assert fix_a.configSnippet is not None
    assert "cache_control" in fix_a.configSnippet
    assert fix_o.configSnippet is not None
    assert "prompt_cache_key" in fix_o.configSnippet


def test_a_large_block_is_large_in_the_tokens_the_provider_billed(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Sizes are byte estimates scaled to what the provider billed: a prompt billed at 1,500 tokens in all holds
    no block of 2,000 tokens, whatever its bytes suggest (Claude Code's recorded run: no such claim)."""
    cassette = orjson.loads((ROOT / TRIGGERS["LARGE_STATIC_CONTEXT_RESENT"]).read_bytes())
    for exchange in cassette["exchanges"]:
        exchange["response"]["body"]["json"]["usage"]["input_tokens"] = 1_500
    path = tmp_path_factory.mktemp("billed") / "small.json"
    path.write_bytes(orjson.dumps(cassette))
    assert "LARGE_STATIC_CONTEXT_RESENT" not in {s.id for s in report_of(str(path)).signals}
    (fired,) = [
        s for s in report_of(TRIGGERS["LARGE_STATIC_CONTEXT_RESENT"]).signals if s.id == "LARGE_STATIC_CONTEXT_RESENT"
    ]
    assert fired.detail == (
        f"Blocks of 2,000+ tokens were re-sent on 2 calls; {fired.estimatedWastedInputTokens:,} of their tokens were "
        "not read from the cache."
    )
    assert "LARGE_STATIC_CONTEXT_RESENT" not in {
        s.id for s in report_of("cassettes/claude-code-tool-loop.json").signals
    }


def test_a_large_block_read_from_the_cache_is_not_resent_uncached(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Providers cache a prompt's prefix, and a block a call re-sends comes before what it sends new: a later
    turn that read its earlier turns from the cache (all but its newest message, as agents' later turns do)
    re-sent no block uncached, whatever its few uncached tokens at the end are."""
    cassette = orjson.loads((ROOT / TRIGGERS["LARGE_STATIC_CONTEXT_RESENT"]).read_bytes())
    sent = 0
    for exchange in cassette["exchanges"]:
        usage = exchange["response"]["body"]["json"]["usage"]
        whole = usage["input_tokens"]
        usage |= {"cache_read_input_tokens": sent, "cache_creation_input_tokens": whole - sent - 4, "input_tokens": 4}
        sent = whole - 4
    path = tmp_path_factory.mktemp("cached") / "cached.json"
    path.write_bytes(orjson.dumps(cassette))
    assert "LARGE_STATIC_CONTEXT_RESENT" not in {s.id for s in report_of(str(path)).signals}
