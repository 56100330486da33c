"""The report as CSV for spreadsheets (RFC 4180: CRLF line ends, a field holding a comma, quote, CR or LF
quoted, quotes doubled). Two sections separated by an empty line: one row per call, then the totals and the
verdict as `section,metric,value`. An empty report still has both headers."""

import csv
import io

from llmproxy.analysis.coverage import Coverage
from llmproxy.analysis.report import Report

CALL_HEADER = [
    "index",
    "provider",
    "model",
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "reasoning_tokens",
    "estimated_cost_usd",
    "cost_is_estimated",
    "latency_ms",
    "tool_calls",
    "finish_reason",
]


def render_csv(report: Report) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CALL_HEADER)
    for call in report.calls:
        writer.writerow(
            [
                call.index,
                call.provider,
                call.model or "",
                call.inputTokens,
                call.outputTokens,
                call.cachedInputTokens,
                call.reasoningTokens,
                call.estimatedCostUsd if call.estimatedCostUsd is not None else "",
                _bool(call.costIsEstimated),
                "" if call.latencyMs is None else call.latencyMs,
                ";".join(tool.name for tool in call.toolCalls),
                call.finishReason or "",
            ]
        )
    writer.writerow([])
    writer.writerow(["section", "metric", "value"])
    totals, verdict = report.totals, report.verdict
    for metric, value in (
        ("call_count", totals.callCount),
        ("failed_call_count", totals.failedCallCount),
        ("unpriced_call_count", totals.unpricedCallCount),
        ("input_tokens", totals.inputTokens),
        ("cached_input_tokens", totals.cachedInputTokens),
        ("cache_write_tokens", totals.cacheWriteTokens),
        ("output_tokens", totals.outputTokens),
        ("reasoning_tokens", totals.reasoningTokens),
        ("estimated_cost_usd", totals.estimatedCostUsd),
        ("cost_is_estimated", _bool(totals.costIsEstimated)),
        ("total_latency_ms", totals.totalLatencyMs),
        ("tool_call_count", totals.toolCallCount),
        ("cache_hit_ratio", totals.cacheHitRatio),
        ("one_shot_rate", totals.oneShotRate),
        ("retry_call_count", totals.retryCallCount),
    ):
        writer.writerow(["totals", metric, value])
    for metric, value in (
        ("grade", verdict.grade),
        ("rationale", verdict.rationale),
        ("total_estimated_saving_usd", verdict.totalEstimatedSavingUsd),
        ("total_wasted_input_tokens", verdict.totalWastedInputTokens),
        ("saving_fraction_of_spend", verdict.savingFractionOfSpend),
        ("high_count", verdict.highCount),
        ("medium_count", verdict.mediumCount),
        ("low_count", verdict.lowCount),
    ):
        writer.writerow(["verdict", metric, value])
    coverage = Coverage.of_report(report)
    for metric, value in (
        ("max_calls", report.filter.maxCalls),
        ("left_out_calls", coverage.left_out),
        ("undecodable_exchanges", coverage.undecodable_count),
    ):
        writer.writerow(["selection", metric, value])
    return out.getvalue()


def _bool(value: bool) -> str:
    return "true" if value else "false"
