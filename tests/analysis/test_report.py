"""The report model: schema v1, determinism, KPIs, the verdict's rules, selection, unpriced calls, redaction."""

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal

import jsonschema
import orjson
import pytest

from llmproxy.analysis.build import Selection
from llmproxy.analysis.render import render
from llmproxy.analysis.render.terminal import render_terminal
from llmproxy.analysis.report import Report
from llmproxy.analysis.signals import SignalFinding
from llmproxy.analysis.sources import Grouping
from llmproxy.analysis.verdict import verdict
from tests.analysis.reports import ROOT, report_of

SCHEMA = orjson.loads((ROOT / "docs" / "json" / "report.schema.json").read_bytes())
EVERYTHING = ("cassettes",)


def test_the_json_report_meets_the_published_schema() -> None:
    document = orjson.loads(render(report_of(*EVERYTHING), "json"))
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    assert document["schemaVersion"] == 1
    assert Report.model_validate(document).totals.callCount == len(document["calls"])


@pytest.mark.parametrize("fmt", ["json", "markdown", "csv", "html", "terminal"])
def test_the_same_inputs_give_byte_identical_output(fmt: str) -> None:
    first = render(report_of(*EVERYTHING), fmt)
    second = render(report_of(*EVERYTHING), fmt)
    assert first == second


def test_totals_and_kpis_add_up_over_the_calls() -> None:
    report = report_of(*EVERYTHING)
    calls, totals = report.calls, report.totals
    assert totals.inputTokens == sum(c.inputTokens for c in calls)
    priced = [Decimal(c.estimatedCostUsd) for c in calls if c.estimatedCostUsd is not None]
    assert Decimal(totals.estimatedCostUsd) == sum(priced)
    assert totals.cacheHitRatio == round(totals.cachedInputTokens / totals.inputTokens, 4)
    assert 0 <= totals.cacheHitRatio <= 1
    assert totals.oneShotRate == round(1 - totals.retryCallCount / totals.callCount, 4)
    assert sum(s.callCount for s in report.sessions) == totals.callCount


def test_an_unpriced_model_is_listed_and_left_out_of_totals(tmp_path_factory: pytest.TempPathFactory) -> None:
    cassette = orjson.loads((ROOT / "cassettes" / "report" / "clean.json").read_bytes())
    for exchange in cassette["exchanges"]:
        exchange["model"] = exchange["request"]["body"]["json"]["model"] = "house-model-7"
    path = tmp_path_factory.mktemp("unpriced") / "house.json"
    path.write_bytes(orjson.dumps(cassette))
    report = report_of(str(path))
    assert report.totals.unpricedCallCount == 3
    assert report.totals.unpricedModels == ["house-model-7"]
    assert report.totals.estimatedCostUsd == "0"
    assert report.totals.costIsEstimated
    assert all(c.estimatedCostUsd is None and c.pricing.startswith("unpriced:") for c in report.calls)
    assert "unpriced" in render(report, "markdown")
    shown = {
        "terminal": "3 calls · unpriced ·",
        "markdown": "- Estimated cost: unpriced",
        "html": "cost<b>unpriced</b>",
    }
    assert "No call could be priced (house-model-7): there is no cost to draw." in render(report, "html")
    for fmt, total in shown.items():  # a total of nothing priced is not a cost of $0
        assert total in render(report, fmt)
        assert "$0" not in render(report, fmt)


def test_an_empty_report_is_grade_a_with_valid_csv() -> None:
    report = report_of("cassettes/quickstart.json", selection=Selection(model="no-such-*"))
    assert report.totals.callCount == 0
    assert (report.verdict.grade, report.verdict.rationale) == ("A", "No optimisation opportunities detected.")
    rows = list(csv.reader(io.StringIO(render(report, "csv"), newline="")))
    assert rows[0][0] == "index"
    assert rows[1] == []
    assert rows[2] == ["section", "metric", "value"]


def test_csv_is_rfc_4180() -> None:
    text = render(report_of("cassettes/report/deterministic-tool-call.json"), "csv")
    assert "\r\n" in text
    assert "\n" not in text.replace("\r\n", "")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    calls = rows[1 : rows.index([])]
    assert [row[0] for row in calls] == ["1", "2", "3"]
    assert all(len(row) == 12 for row in calls)
    assert ["verdict", "grade", "B"] in rows


def _finding(signal: str, severity: str, affected: tuple[int, ...], saving: str, wasted: int | None) -> SignalFinding:
    return SignalFinding(signal, severity, affected, wasted, Decimal(saving), "")


def test_verdict_counts_each_call_once_at_its_largest_share() -> None:
    totals = report_of("cassettes/report/clean.json").totals
    overlapping = [
        _finding("REPEATED_SYSTEM_PROMPT", "MEDIUM", (1, 2), "0.0010", 200),
        _finding("LOW_CACHE_HIT_RATE", "MEDIUM", (2,), "0.0008", 150),
    ]
    result = verdict(overlapping, totals, Decimal("0.0100"))
    assert Decimal(result.totalEstimatedSavingUsd) == Decimal("0.0005") + Decimal("0.0008")  # not 0.0018
    assert result.totalWastedInputTokens == 100 + 150
    assert (result.grade, result.mediumCount) == ("B", 2)  # 13% recoverable: a score of 87


def test_verdict_clamps_to_spend_and_grades() -> None:
    totals = report_of("cassettes/report/clean.json").totals
    result = verdict([_finding("DUPLICATE_CONSECUTIVE_CALL", "MEDIUM", (1,), "5", 10)], totals, Decimal("1"))
    assert (result.totalEstimatedSavingUsd, result.savingFractionOfSpend, result.grade) == ("1", 1.0, "F")
    for saving, grade in (("0.10", "A"), ("0.11", "B"), ("0.26", "C"), ("0.41", "D"), ("0.56", "F")):
        found = [_finding("OUTPUT_TOKEN_BLOAT", "LOW", (1,), saving, None)]
        assert verdict(found, totals, Decimal("1")).grade == grade
    assert verdict([_finding("LOW_CACHE_HIT_RATE", "HIGH", (1,), "0.01", 5)], totals, Decimal(1)).grade == "B"


def test_without_priced_spend_the_fraction_is_of_input_tokens() -> None:
    totals = report_of("cassettes/report/clean.json").totals
    result = verdict(
        [SignalFinding("UNUSED_TOOL_SCHEMA", "LOW", (1,), totals.inputTokens // 2, None, "")], totals, Decimal(0)
    )
    assert result.savingFractionOfSpend == round((totals.inputTokens // 2) / totals.inputTokens, 4)
    assert "of input tokens" in result.rationale


def test_max_calls_keeps_the_newest_and_says_how_many_were_left_out() -> None:
    report = report_of("cassettes/report/output-token-bloat.json", selection=Selection(max_calls=2))
    assert [c.exchangeId for c in report.calls] == [3, 4]
    assert (report.filter.droppedCalls, report.filter.maxCalls) == (2, 2)


def test_filters_by_provider_model_host_and_time() -> None:
    both = ("cassettes/report/low-cache-hit-rate.json", "cassettes/report/clean.json")
    assert {c.provider for c in report_of(*both, selection=Selection(provider="openai")).calls} == {"openai"}
    assert {c.model for c in report_of(*both, selection=Selection(model="claude-*")).calls} == {"claude-haiku-4-5"}
    assert {c.host for c in report_of(*both, selection=Selection(host="api.openai.com")).calls} == {"api.openai.com"}
    later = Selection(since=datetime(2026, 6, 1, 9, 0, 3, tzinfo=UTC))
    assert [c.exchangeId for c in report_of(*both, selection=later).calls] == [3, 3]


def test_sessions_group_by_cassette_folder_conversation_and_host() -> None:
    paths = ("cassettes/report/clean.json", "cassettes/report/model-overspend.json", "cassettes/codex-tool-loop.json")
    by = {grouping: report_of(*paths, grouping=grouping) for grouping in Grouping}
    assert len(by[Grouping.CASSETTE].sessions) == 3
    assert [s.id for s in by[Grouping.FOLDER].sessions] == ["cassettes/report", "cassettes"]
    assert {s.id for s in by[Grouping.HOST].sessions} == {"api.anthropic.com", "api.openai.com"}
    conversations = by[Grouping.CONVERSATION].sessions
    assert len(conversations) == 1 + 3 + 1  # a conversation of three turns, three one-off questions, one codex loop
    assert by[Grouping.CONVERSATION].groupingBasis == "CONVERSATION"


def test_secrets_in_recorded_traffic_never_reach_the_report(tmp_path_factory: pytest.TempPathFactory) -> None:
    secret = "sk-ant-api03-" + "A" * 90
    cassette = orjson.loads((ROOT / "cassettes" / "report" / "deterministic-tool-call.json").read_bytes())
    for exchange in cassette["exchanges"]:
        exchange["request"]["body"]["json"]["messages"][0]["content"] = f"my key is {secret}"
        for part in exchange["response"]["body"]["json"]["content"]:
            part["input"]["token"] = secret
    path = tmp_path_factory.mktemp("secret") / "leaky.json"
    path.write_bytes(orjson.dumps(cassette))
    report = report_of(str(path))
    for fmt in ("json", "markdown", "csv", "html", "terminal"):
        assert secret not in render(report, fmt)
    assert report.redaction.placeholders > 0
    assert "<redacted:" in render(report, "markdown")


def test_every_format_shows_the_baseline_comparison() -> None:
    from llmproxy.analysis.baseline import compare

    before = report_of("cassettes/report/clean.json")
    after = report_of("cassettes/report/repeated-system-prompt.json")
    compared = after.model_copy(update={"baseline": compare(after, before, "old.json")})
    for fmt in ("terminal", "html"):
        assert "vs old.json: grade A → D" in render(compared, fmt)
    assert "## Compared with the baseline" in render(compared, "markdown")
    document = orjson.loads(render(compared, "json"))
    assert document["baseline"]["gradeDrop"] == 3
    jsonschema.Draft202012Validator(SCHEMA).validate(document)


def test_a_compatible_vendor_is_priced_as_itself(tmp_path_factory: pytest.TempPathFactory) -> None:
    cassette = orjson.loads((ROOT / "cassettes" / "report" / "low-cache-hit-rate.json").read_bytes())
    for exchange in cassette["exchanges"]:
        exchange["request"]["url"] = "https://api.deepseek.com/v1/chat/completions"
        exchange["model"] = exchange["request"]["body"]["json"]["model"] = "deepseek-chat"
    path = tmp_path_factory.mktemp("deepseek") / "deepseek.json"
    path.write_bytes(orjson.dumps(cassette))
    report = report_of(str(path))
    assert {(call.provider, call.vendor) for call in report.calls} == {("openai", "deepseek")}
    assert all("deepseek deepseek-chat" in call.pricing for call in report.calls)


def test_what_does_not_decode_is_skipped_and_a_failed_call_is_a_row(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The report reads exchanges through `decode_exchange`: a request or an answer that does not decode is
    counted as skipped, and why; an error answer is a call that billed nothing, with the upstream's reason."""
    cassette = orjson.loads((ROOT / "cassettes" / "report" / "clean.json").read_bytes())
    bad_request, bad_answer, failed = cassette["exchanges"]
    bad_request["request"]["body"]["json"]["messages"] = "not a list"
    bad_answer["response"]["body"]["json"]["content"] = 3
    failed["response"].update(status=529, reason="Overloaded")
    failed["response"]["body"]["json"] = {"type": "error", "error": {"type": "overloaded_error", "message": "Busy"}}
    path = tmp_path_factory.mktemp("broken") / "broken.json"
    path.write_bytes(orjson.dumps(cassette))
    report = report_of(str(path))
    assert report.sources[0].skipped == {"undecodable request": 1, "undecodable response": 1}
    (row,) = report.calls
    assert (row.exchangeId, row.status, row.error) == (3, 529, "status 529: Busy")
    assert (row.inputTokens, row.outputTokens, row.tokensEstimated, row.estimatedCostUsd) == (0, 0, False, "0")


def test_the_terminal_table_keeps_model_names_whole_at_80_columns(tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.analysis.reports import question, recorded

    dated = recorded(tmp_path_factory.mktemp("dated") / "dated.json", [question(0, model="claude-sonnet-4-5-20250929")])
    report = report_of(
        "cassettes/claude-code-tool-loop.json",
        "cassettes/codex-tool-loop.json",
        "cassettes/gemini-cli-tool-loop.json",
        "cassettes/opencode-tool-loop.json",
        dated,
    )
    text = render_terminal(report, width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    table = text[text.index("Calls") :]
    for call in report.calls:
        assert call.model is not None
        assert f" {call.model} " in table, call.model
