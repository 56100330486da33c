"""What a report's signals must never contradict: its own counts. `assert_consistent` checks every signal of a
report against the rows, totals and verdict beside it, and against the calls the rows were made from — the
same rule, whatever the run (a folder of per-test cassettes, a coding agent's session, a run under chaos)."""

import re
from collections import defaultdict
from collections.abc import Sequence
from decimal import Decimal

import orjson

from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.report import CallRow, Report, Signal
from llmproxy.analysis.signals import caching_minimum

COUNTED = re.compile(r"^(?P<count>[\d,]+) (?:calls?|requests?|answers?) ")
"""The number of calls a detail opens with ("3 calls asked…", "1 request repeated…")."""
ON_CALLS = re.compile(r"(?:on|were sent on) (?P<count>[\d,]+) calls?\b")
UNUSED = re.compile(
    r"^(?P<tools>[\d,]+) tools? offered on (?P<calls>[\d,]+) calls?.* never called.*?\((?P<names>[^)]*)\)"
)
MINIMUMS = re.compile(r"caching minimums? (?:is|are) (?P<low>[\d,]+)(?: to (?P<high>[\d,]+))? tokens")


def number(text: str) -> int:
    return int(text.replace(",", ""))


def assert_consistent(report: Report, calls: Sequence[RecordedCall]) -> None:
    rows = report.calls
    assert [(row.source, row.exchangeId) for row in rows] == [(call.source, call.exchange_id) for call in calls]
    assert report.totals.callCount == len(rows)
    assert report.totals.toolCallCount == sum(len(row.toolCalls) for row in rows)
    spend = sum((Decimal(row.estimatedCostUsd) for row in rows if row.estimatedCostUsd is not None), Decimal(0))
    assert Decimal(report.verdict.totalEstimatedSavingUsd) <= spend
    assert report.verdict.totalWastedInputTokens <= report.totals.inputTokens
    for signal in report.signals:
        affected = signal.affectedCalls
        where = f"{signal.id} ({signal.detail})"
        assert affected, where
        assert affected == sorted(set(affected)), where
        assert all(1 <= index <= len(rows) for index in affected), where
        chosen = [rows[index - 1] for index in affected]
        assert not any(_failed(row) for row in chosen), f"{where} names a call that got no answer"
        cost = sum((Decimal(row.estimatedCostUsd or 0) for row in chosen), Decimal(0))
        if signal.estimatedSavingUsd is not None:
            assert Decimal(signal.estimatedSavingUsd) <= cost, f"{where} saves more than its calls cost"
        if signal.estimatedWastedInputTokens is not None:
            assert signal.estimatedWastedInputTokens <= sum(row.inputTokens for row in chosen), where
        if (opening := COUNTED.match(signal.detail)) is not None:
            assert number(opening["count"]) == len(affected), where
        if (on := ON_CALLS.search(signal.detail)) is not None:
            assert number(on["count"]) == len(affected), where
        if signal.estimatedWastedInputTokens is not None and signal.id != "DUPLICATE_CONSECUTIVE_CALL":
            assert f"{signal.estimatedWastedInputTokens:,}" in signal.detail, where
        CHECKS.get(signal.id, _nothing_more)(signal, report, calls)


def _failed(row: CallRow) -> bool:
    return row.error is not None or row.status is None or row.status >= 400


def _nothing_more(signal: Signal, report: Report, calls: Sequence[RecordedCall]) -> None:
    pass


def _unused_tool_schema(signal: Signal, report: Report, calls: Sequence[RecordedCall]) -> None:
    """A tool said never called is called by no call of the report; the calls named are exactly the answered
    calls that offered one."""
    found = UNUSED.match(signal.detail)
    assert found is not None, signal.detail
    called = {tool.name for row in report.calls for tool in row.toolCalls}
    returned = {block.name for call in calls for block in call.tool_results if block.name}
    never = {name for row in report.calls for name in row.definedToolNames} - called - returned
    names = [name for name in found["names"].split(", ") if name != "…"]
    assert set(names) <= never, f"said never called, but called: {sorted(set(names) - never)}"
    assert number(found["tools"]) == len({n for i in signal.affectedCalls for n in _offered(report, i)} & never)
    offering = [row.index for row in report.calls if not _failed(row) and set(row.definedToolNames) & never]
    assert signal.affectedCalls == [i for i in offering if calls[i - 1].defined_tool_tokens > 0]


def _offered(report: Report, index: int) -> list[str]:
    return report.calls[index - 1].definedToolNames


def _deterministic_tool_call(signal: Signal, report: Report, calls: Sequence[RecordedCall]) -> None:
    """Each call named asks for a tool call that another call of its session asks for too, name and arguments."""
    asked: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    for row in report.calls:
        for tool in row.toolCalls:
            arguments = orjson.dumps(orjson.loads(tool.arguments), option=orjson.OPT_SORT_KEYS).decode()
            asked[row.session, tool.name, arguments].add(row.index)
    repeated = {key: indices for key, indices in asked.items() if len(indices) > 1}
    assert signal.affectedCalls == sorted({index for indices in repeated.values() for index in indices})
    assert signal.detail.endswith(f"({', '.join(sorted({name for _, name, _ in repeated}))}).")


def _duplicate_consecutive_call(signal: Signal, report: Report, calls: Sequence[RecordedCall]) -> None:
    """Each call named repeats, unchanged, the call its session had just had answered."""
    previous: dict[str, CallRow] = {}
    before: dict[int, CallRow] = {}
    for row in report.calls:
        if row.session in previous:
            before[row.index] = previous[row.session]
        previous[row.session] = row
    for index in signal.affectedCalls:
        row, earlier = report.calls[index - 1], before.get(index)
        assert earlier is not None
        assert not _failed(earlier)
        same = ("path", "model", "messageCount", "systemPromptFingerprint", "definedToolNames")
        assert all(getattr(row, field) == getattr(earlier, field) for field in same)
        assert calls[index - 1].shape == calls[earlier.index - 1].shape


def _repeated_system_prompt(signal: Signal, report: Report, calls: Sequence[RecordedCall]) -> None:
    """Each call named re-sends a system prompt an earlier answered call sent, long enough for its model to
    cache, and the tokens said not read from the cache are tokens its calls sent uncached."""
    for index in signal.affectedCalls:
        call = calls[index - 1]
        earlier = {c.system_fingerprint for c in calls[: index - 1] if not c.failed}
        assert call.system_fingerprint is not None
        assert call.system_fingerprint in earlier
        assert call.tokens(call.system_tokens) >= caching_minimum(call), (
            f"call {index} ({call.model}): a {call.tokens(call.system_tokens):,}-token system prompt is below the "
            f"{caching_minimum(call):,} tokens its model caches"
        )
    uncached = sum(calls[i - 1].usage.input_tokens - calls[i - 1].usage.cache_read_tokens for i in signal.affectedCalls)
    assert (signal.estimatedWastedInputTokens or 0) <= uncached


def _low_cache_hit_rate(signal: Signal, report: Report, calls: Sequence[RecordedCall]) -> None:
    """The ratio quoted is the report's; the minimum quoted is the affected calls' models'; those calls are among
    those re-sending a system prompt."""
    assert report.totals.cacheHitRatio < 0.5
    assert signal.detail.startswith(f"{report.totals.cacheHitRatio:.0%} of input tokens")
    _repeated_system_prompt(signal, report, calls)
    (repeated,) = [s for s in report.signals if s.id == "REPEATED_SYSTEM_PROMPT"]
    assert set(signal.affectedCalls) <= set(repeated.affectedCalls)
    minimums = sorted({caching_minimum(calls[i - 1]) for i in signal.affectedCalls})
    quoted = MINIMUMS.search(signal.detail)
    assert quoted is not None, signal.detail
    assert [number(quoted["low"]), number(quoted["high"] or quoted["low"])] == [minimums[0], minimums[-1]]


def _large_static_context_resent(signal: Signal, report: Report, calls: Sequence[RecordedCall]) -> None:
    """A block re-sent uncached on a call whose prompt its model could have cached, at most its uncached input."""
    for index in signal.affectedCalls:
        call = calls[index - 1]
        assert call.usage.input_tokens >= caching_minimum(call)
    uncached = sum(calls[i - 1].usage.input_tokens - calls[i - 1].usage.cache_read_tokens for i in signal.affectedCalls)
    assert (signal.estimatedWastedInputTokens or 0) <= uncached


def _output_token_bloat(signal: Signal, report: Report, calls: Sequence[RecordedCall]) -> None:
    """A long answer: long outright, or against the median of its session's answered calls (three or more)."""
    answered: dict[str, int] = defaultdict(int)
    for call in calls:
        answered[call.session] += not call.failed
    for index in signal.affectedCalls:
        call = calls[index - 1]
        assert call.visible_output_tokens > 0
        assert call.visible_output_tokens >= 1_500 or answered[call.session] >= 3


def _model_overspend(signal: Signal, report: Report, calls: Sequence[RecordedCall]) -> None:
    for index in signal.affectedCalls:
        row = report.calls[index - 1]
        assert not row.toolCalls
        assert row.status == 200
        assert row.inputTokens < 1_024
        assert row.outputTokens - row.reasoningTokens < 256


CHECKS = {
    "UNUSED_TOOL_SCHEMA": _unused_tool_schema,
    "DETERMINISTIC_TOOL_CALL": _deterministic_tool_call,
    "DUPLICATE_CONSECUTIVE_CALL": _duplicate_consecutive_call,
    "REPEATED_SYSTEM_PROMPT": _repeated_system_prompt,
    "LOW_CACHE_HIT_RATE": _low_cache_hit_rate,
    "LARGE_STATIC_CONTEXT_RESENT": _large_static_context_resent,
    "OUTPUT_TOKEN_BLOAT": _output_token_bloat,
    "MODEL_OVERSPEND": _model_overspend,
}
