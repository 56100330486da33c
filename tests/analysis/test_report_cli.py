"""`llmproxy report` as users run it: a child process over committed cassettes, its outputs and exit codes."""

import subprocess
import sys
from pathlib import Path

import orjson

from llmproxy.analysis.report import Report
from tests.analysis.reports import ROOT


def llmproxy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_default_off_a_terminal_is_the_markdown_brief() -> None:
    run = llmproxy("report", "cassettes/claude-code-tool-loop.json")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("# LLM optimisation brief")
    order = ["## Verdict", "## Run summary", "## Calls", "## Detected opportunities", "## Appendix"]
    positions = [run.stdout.index(heading) for heading in order]
    assert positions == sorted(positions)


def test_every_format_writes_to_a_file(tmp_path: Path) -> None:
    for fmt in ("json", "markdown", "csv", "html", "terminal"):
        out = tmp_path / f"report.{fmt}"
        run = llmproxy("report", "cassettes", "--format", fmt, "-o", str(out), "--max-calls", "0")
        assert run.returncode == 0, run.stderr
        assert out.stat().st_size > 0
    report = Report.model_validate_json((tmp_path / "report.json").read_bytes())
    assert {Path(source.path).name for source in report.sources} >= {"claude-code-tool-loop.json", "clean.json"}


def test_inputs_that_cannot_be_read_exit_2_with_one_line(tmp_path: Path) -> None:
    missing = llmproxy("report", "no-such.json")
    assert (missing.returncode, missing.stderr.count("\n")) == (2, 1)
    assert "no-such.json: no such file or folder" in missing.stderr
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{")
    broken = llmproxy("report", str(garbage))
    assert broken.returncode == 2
    assert "invalid JSON" in broken.stderr
    prices = tmp_path / "prices.json"
    prices.write_text('{"prices": [{"model": "m", "input_mtok": -1}]}')
    bad = llmproxy("report", "cassettes/quickstart.json", "--prices", str(prices))
    assert bad.returncode == 2
    assert "input_mtok" in bad.stderr
    since = llmproxy("report", "cassettes/quickstart.json", "--since", "yesterday")
    assert since.returncode == 2
    assert "ISO 8601" in since.stderr


def test_a_prices_file_prices_an_unknown_model(tmp_path: Path) -> None:
    cassette = orjson.loads((ROOT / "cassettes" / "report" / "clean.json").read_bytes())
    for exchange in cassette["exchanges"]:
        exchange["model"] = exchange["request"]["body"]["json"]["model"] = "house-model-7"
    (tmp_path / "house.json").write_bytes(orjson.dumps(cassette))
    (tmp_path / "prices.json").write_text(
        '{"prices": [{"model": "house-model-7", "input_mtok": "1", "output_mtok": "2"}]}'
    )
    run = llmproxy("report", "house.json", "--prices", "prices.json", "--format", "json", cwd=tmp_path)
    report = Report.model_validate_json(run.stdout)
    assert report.totals.unpricedCallCount == 0
    assert report.pricing.endswith("+ prices from prices.json")
    assert all(call.pricing.startswith("prices file: prices.json") for call in report.calls)


def test_a_baseline_shows_signals_new_resolved_and_kpi_deltas(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    assert llmproxy("report", "cassettes/report/clean.json", "--format", "json", "-o", str(old)).returncode == 0
    run = llmproxy("report", "cassettes/report/repeated-system-prompt.json", "--baseline", str(old), "--format", "json")
    comparison = Report.model_validate_json(run.stdout).baseline
    assert comparison is not None
    assert {(s.id, s.status) for s in comparison.signals} == {
        ("LOW_CACHE_HIT_RATE", "new"),
        ("REPEATED_SYSTEM_PROMPT", "new"),
    }
    assert (comparison.previousGrade, comparison.gradeDrop) == ("A", 3)
    assert comparison.costIncrease is not None
    assert comparison.costIncrease > 1
    kpis = {kpi.name: kpi for kpi in comparison.kpis}
    assert (kpis["callCount"].previous, kpis["callCount"].current, kpis["callCount"].delta) == (3, 3, 0)
    assert isinstance(kpis["inputTokens"].delta, int)  # counts stay counts, not 60.0
    markdown = llmproxy("report", "cassettes/report/repeated-system-prompt.json", "--baseline", str(old)).stdout
    assert "## Compared with the baseline" in markdown
    assert "Grade A → D (down 3 letters)" in markdown
    assert "| inputTokens | 5,340 | 5,400 | +60 |" in markdown
    back = llmproxy("report", "cassettes/report/clean.json", "--baseline", str(old), "--format", "json")
    assert all(s.status == "unchanged" for s in Report.model_validate_json(back.stdout).baseline.signals)  # type: ignore[union-attr]
