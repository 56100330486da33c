"""Verdicts that tell the truth: a run whose calls failed never reads as a clean one in any format, and the
report's counts agree with each other wherever they appear."""

import csv
import io
import re
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from llmproxy.analysis.render import render
from llmproxy.analysis.report import Report
from llmproxy.cli import main
from tests.analysis.reports import at_root, question, recorded, report_of
from tests.analysis.test_verify import CLEAN, verify

FORMATS = ("terminal", "markdown", "json", "csv", "html")
GAVE_UP = "cassettes/chaos/gave-up.json"


def flat(text: str) -> str:
    """A rendering's words on one line (the terminal wraps, the HTML has tags between them)."""
    return " ".join(re.sub(r"<[^>]+>", " ", text).replace("│", " ").split())


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> str:
    """No chaos: the upstream was down. Two calls refused with 500, one never answered."""
    return recorded(
        tmp_path_factory.mktemp("down") / "down.json",
        [question(0, status=500), question(1, status=500), question(2, status=0)],
    )


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Five calls: three answered, two refused with 529."""
    answers = [question(0), question(1, status=529), question(2), question(3, status=529), question(4)]
    return recorded(tmp_path_factory.mktemp("mixed") / "mixed.json", answers)


def test_a_run_where_every_call_failed_never_reads_as_clean(refused: str) -> None:
    for path, said in (
        (GAVE_UP, "3 of 3 calls failed (3 with status 529)"),
        (refused, "3 of 3 calls failed (2 with status 500, 1 with no response)"),
    ):
        report = report_of(path)
        assert report.totals.failedCallCount == 3
        assert report.verdict.reliability is not None
        assert said in report.verdict.rationale
        assert "No optimisation opportunities detected" not in report.verdict.rationale
        assert report.verdict.rationale.startswith("No call was answered, so there was nothing to optimise. 3 of 3")
        for fmt in FORMATS:
            text = flat(render(report, fmt))
            assert said in text, (path, fmt)
            assert "Grade A — No optimisation opportunities detected" not in text, (path, fmt)
        rows = list(csv.reader(io.StringIO(render(report, "csv"), newline="")))
        assert ["totals", "failed_call_count", "3"] in rows
        assert 'data-failed="3"' in render(report, "html")


def test_the_verdict_names_the_faults_and_what_the_client_did() -> None:
    report = report_of(GAVE_UP)
    assert report.resilience is not None
    reliability = report.verdict.reliability
    assert reliability is not None
    assert f"llmproxy injected 3 faults ({report.resilience.counted()}): {report.resilience.verdict}" in reliability
    assert "3 of 3 calls failed (3 with status 529); the client asked again after 2 of them; " in reliability
    for fmt in FORMATS:
        assert report.resilience.verdict in flat(render(report, fmt)), fmt


def test_a_run_with_some_failed_calls_says_how_many(mixed: str) -> None:
    report = report_of(mixed)
    assert report.totals.failedCallCount == 2
    assert report.verdict.rationale.endswith("2 of 5 calls failed (2 with status 529).")
    clean = report_of("cassettes/report/clean.json")
    assert (clean.totals.failedCallCount, clean.verdict.reliability) == (0, None)
    assert clean.verdict.rationale == "No optimisation opportunities detected."


@pytest.mark.parametrize("path", [GAVE_UP, "cassettes/chaos/recovered.json", "cassettes/report", "cassettes"])
def test_the_report_counts_agree_across_its_sections(path: str) -> None:
    check_counts(report_of(path))


def test_the_counts_of_a_mixed_run_agree_across_its_sections(mixed: str, refused: str) -> None:
    check_counts(report_of(mixed))
    check_counts(report_of(refused, mixed))


def check_counts(report: Report) -> None:
    t, calls = report.totals, report.calls
    failed = [c for c in calls if c.error is not None or c.status is None or c.status >= 400]
    assert t.callCount == len(calls) == sum(s.callCount for s in report.sessions)
    assert t.callCount == sum(s.calls for s in report.sources) - report.filter.droppedCalls
    assert t.failedCallCount == len(failed)
    assert t.unpricedCallCount == sum(1 for c in calls if c.estimatedCostUsd is None)
    assert t.pricedCallCount + t.unpricedCallCount == t.callCount
    assert t.retryCallCount == sum(1 for c in calls if c.retry)
    assert t.toolCallCount == sum(len(c.toolCalls) for c in calls)
    assert t.inputTokens == sum(c.inputTokens for c in calls)
    assert t.outputTokens == sum(c.outputTokens for c in calls)
    v = report.verdict
    severities = [s.severity for s in report.signals]
    assert (v.highCount, v.mediumCount, v.lowCount) == tuple(
        severities.count(level) for level in ("HIGH", "MEDIUM", "LOW")
    )
    if report.signals:
        findings = f"across {len(report.signals)} finding{'s' if len(report.signals) != 1 else ''}"
        assert findings in v.rationale
    if t.failedCallCount:
        assert f"{t.failedCallCount} of {t.callCount} calls failed" in v.rationale
    else:
        assert "failed" not in v.rationale
    if report.resilience is not None:
        r = report.resilience
        assert sum(r.injected.values()) == len(r.faults)
        assert all(1 <= f.call <= t.callCount for f in r.faults)
        assert f"llmproxy injected {len(r.faults)} fault" in v.rationale

    markdown = render(report, "markdown")
    assert f"- Calls: {t.callCount} in " in markdown
    assert len(re.findall(r"^\| \d+ \| ", markdown.split("## Calls")[1].split("\n## ")[0], re.M)) == t.callCount
    assert f"- Tool calls: {t.toolCallCount}" in markdown
    assert f"({t.retryCallCount} retries)" in markdown
    rows = list(csv.reader(io.StringIO(render(report, "csv"), newline="")))
    assert len(rows[1 : rows.index([])]) == t.callCount
    assert ["totals", "call_count", str(t.callCount)] in rows
    assert ["totals", "failed_call_count", str(t.failedCallCount)] in rows
    html = render(report, "html")
    assert html.count('<tr data-call="') == t.callCount
    assert f'data-failed="{t.failedCallCount}"' in html
    terminal = flat(render(report, "terminal"))
    assert f"{t.callCount} call" in terminal
    document = orjson.loads(render(report, "json"))
    assert document["totals"]["failedCallCount"] == t.failedCallCount


def test_no_gate_passes_a_run_where_every_call_failed(refused: str, tmp_path: Path) -> None:
    code, _, err = verify("cost", refused, "--max-usd", "1")
    assert code == 2
    assert err == (
        "llmproxy verify cost: none of the 3 calls was answered (2 with status 500, 1 with no response): "
        "a cost of $0.00 says nothing about the budget\n"
    )
    code, _, err = verify("tool-call", refused, "--name", "Bash", "--at-most", "0")
    assert code == 2
    assert "none of the 3 calls was answered" in err

    baseline = tmp_path / "baseline.json"
    with at_root():
        assert CliRunner().invoke(main, ["report", CLEAN, "--format", "json", "-o", str(baseline)]).exit_code == 0
    code, _, err = verify("report", refused, "--baseline", str(baseline), "--max-grade-drop", "0")
    assert code == 1
    assert err == "llmproxy verify report: 3 of 3 calls failed; the baseline had 0 failed calls\n"
    assert verify("report", CLEAN, "--baseline", str(baseline))[0] == 0
