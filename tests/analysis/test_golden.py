"""Every renderer, byte for byte, over committed cassettes: a real Claude Code tool loop, a real Codex tool
loop, and a crafted run with findings (tests/analysis/golden.py; scripts/regen_golden.py rewrites them)."""

import pytest

from tests.analysis.golden import CASSETTES, DOC, QUOTE, SUFFIXES, VERDICT, doc_quotes, golden_path, rendered


@pytest.mark.parametrize("fmt", list(SUFFIXES))
@pytest.mark.parametrize("cassette", CASSETTES)
def test_the_renderer_output_matches_its_golden_file(cassette: str, fmt: str) -> None:
    expected = golden_path(cassette, fmt).read_bytes().decode()
    assert rendered(cassette, fmt) == expected, "run scripts/regen_golden.py and review the diff"


def test_the_docs_quote_each_signal_as_the_report_prints_it() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert {match["signal"] for match in QUOTE.finditer(text)} >= {
        "REPEATED_SYSTEM_PROMPT",
        "LARGE_STATIC_CONTEXT_RESENT",
        "DETERMINISTIC_TOOL_CALL",
        "OVERSIZED_TOOL_RESULT",
        "OUTPUT_TOKEN_BLOAT",
        "DUPLICATE_CONSECUTIVE_CALL",
        "LOW_CACHE_HIT_RATE",
        "MODEL_OVERSPEND",
        "UNUSED_TOOL_SCHEMA",
    }
    assert VERDICT.search(text) is not None
    assert doc_quotes(text) == text, "run scripts/regen_golden.py and review the diff"
