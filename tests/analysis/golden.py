"""The report golden files: every renderer's output for committed cassettes, under tests/golden/report/,
and the signal details docs/report.md quotes. `scripts/regen_golden.py` rewrites them; review the diff (a
golden change is a change users see)."""

import re
from pathlib import Path

from llmproxy.analysis.figures import verdict_sentence
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


DOC = ROOT / "docs" / "report.md"
QUOTE = re.compile(r"(<!-- quoted: (?P<cassette>\S+) (?P<signal>[A-Z_]+) -->\n)(?P<indent> *)> .*\n")
"""In docs/report.md, a marker naming a cassette and a signal, then the line quoting what the report says."""


VERDICT = re.compile(r"(<!-- verdict: (?P<cassette>\S+) -->\n)> .*\n")
"""In docs/report.md, a marker naming a cassette, then the line quoting its verdict's reason."""


def doc_quotes(text: str) -> str:
    """docs/report.md with each quoted signal detail and verdict as the report prints it for the cassette named."""

    def quoted(match: re.Match[str]) -> str:
        report = report_of(match["cassette"])
        (detail,) = [signal.detail for signal in report.signals if signal.id == match["signal"]]
        return f"{match[1]}{match['indent']}> {detail}\n"

    def verdict(match: re.Match[str]) -> str:
        return f"{match[1]}> {verdict_sentence(report_of(match['cassette']).verdict)}\n"

    return VERDICT.sub(verdict, QUOTE.sub(quoted, text))


def regenerate_doc_quotes() -> int:
    text = DOC.read_text(encoding="utf-8")
    DOC.write_text(doc_quotes(text), encoding="utf-8", newline="")
    return len(QUOTE.findall(text)) + len(VERDICT.findall(text))
