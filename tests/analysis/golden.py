"""The report golden files: every renderer's output for committed cassettes, under tests/golden/report/.
`scripts/regen_golden.py` rewrites them; review the diff (a golden change is a change users see)."""

from pathlib import Path

from llmproxy.analysis.render import render
from tests.analysis.reports import ROOT, report_of

GOLDEN = ROOT / "tests" / "golden" / "report"
CASSETTES = (
    "cassettes/claude-code-tool-loop.json",
    "cassettes/codex-tool-loop.json",
    "cassettes/report/repeated-system-prompt.json",
)
SUFFIXES = {"json": ".json", "markdown": ".md", "csv": ".csv", "html": ".html", "terminal": ".txt"}


def golden_path(cassette: str, fmt: str) -> Path:
    return GOLDEN / (Path(cassette).stem + SUFFIXES[fmt])


def rendered(cassette: str, fmt: str) -> str:
    return render(report_of(cassette), fmt)


def regenerate() -> int:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for cassette in CASSETTES:
        for fmt in SUFFIXES:
            golden_path(cassette, fmt).write_text(rendered(cassette, fmt), encoding="utf-8", newline="")
    return len(CASSETTES) * len(SUFFIXES)
