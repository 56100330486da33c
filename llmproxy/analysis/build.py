"""Calls → the report: selection, per-call rows, sessions, totals and KPIs, signals, verdict, appendix.

Pure and deterministic: the same calls and options give the same report, byte for byte once rendered
(nothing reads the clock; every ordering has a tie-breaker).
"""

import fnmatch
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Protocol

from llmproxy.analysis.appendix import appendix
from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.figures import money, ratio
from llmproxy.analysis.fixes import TITLES, fix_for
from llmproxy.analysis.redaction import Scrubber
from llmproxy.analysis.report import (
    CallRow,
    Filter,
    McpToolRef,
    Redaction,
    Report,
    SessionRow,
    Signal,
    Source,
    ToolCallRow,
    Totals,
)
from llmproxy.analysis.resilience import resilience
from llmproxy.analysis.savings import ZERO, Savings
from llmproxy.analysis.signals import SignalFinding, detect
from llmproxy.analysis.sources import Grouping, SourceSummary
from llmproxy.analysis.tool_servers import ToolTally, oversized_origins, tool_row
from llmproxy.analysis.verdict import Failures, verdict
from llmproxy.model import Conversation
from llmproxy.pricing import PriceBook, Priced, Unpriced, library_version

RETRY_WINDOW = 3
_WEIGHTS = {"HIGH": 1.0, "MEDIUM": 0.6, "LOW": 0.3}
_RANK = {"HIGH": 0, "MEDIUM": 1, "LOW": 2}


@dataclass(frozen=True, slots=True)
class Selection:
    """Which calls a report covers. `model` may be a glob (`claude-*`); `max_calls` keeps the newest N (0, the
    default: all — a report covers every call unless asked for less, and then says what it left out)."""

    session: str | None = None
    host: str | None = None
    provider: str | None = None
    model: str | None = None
    since: datetime | None = None
    max_calls: int = 0

    def admits(self, call: RecordedCall) -> bool:
        if self.session is not None and call.session != self.session:
            return False
        if self.host is not None and call.host != self.host:
            return False
        if self.provider is not None and self.provider.lower() not in (call.provider.value, call.vendor):
            return False
        if self.model is not None and not fnmatch.fnmatchcase(call.model or "", self.model):
            return False
        return self.since is None or call.started_at >= self.since


class Dated(Protocol):
    """A call as `oldest_first` orders it."""

    @property
    def started_at(self) -> datetime: ...
    @property
    def source(self) -> str: ...
    @property
    def exchange_id(self) -> int: ...


def oldest_first(call: Dated) -> tuple[datetime, str, int]:
    """The order calls are judged and reported in: by when they started, then where they were recorded."""
    return call.started_at, call.source, call.exchange_id


def select(calls: Sequence[RecordedCall], selection: Selection) -> tuple[list[RecordedCall], int]:
    """The calls admitted, oldest first, and how many older ones `max_calls` left out."""
    chosen = sorted((call for call in calls if selection.admits(call)), key=oldest_first)
    dropped = max(0, len(chosen) - selection.max_calls) if selection.max_calls > 0 else 0
    return chosen[dropped:], dropped


def build_report(
    calls: Sequence[RecordedCall],
    sources: Sequence[SourceSummary],
    *,
    book: PriceBook,
    grouping: Grouping = Grouping.CASSETTE,
    selection: Selection = Selection(),
    conversation: Callable[[RecordedCall], Conversation | None] = lambda call: None,
    prices_files: Sequence[str] = (),
    tool_servers: Sequence[ToolTally] = (),
) -> Report:
    """`tool_servers`: the run's MCP tool calls (`Recorded.tool_servers`), reported beside the chat calls."""
    chosen, dropped = select(calls, selection)
    scrub = Scrubber()
    retries = _retries(chosen)
    findings = [oversized_origins(finding, chosen, tool_servers) for finding in detect(chosen, Savings(book))]
    spend = sum((call.cost.usd for call in chosen if isinstance(call.cost, Priced)), ZERO)
    totals = _totals(chosen, retries, spend)
    rows = [_row(index, call, index in retries, scrub) for index, call in enumerate(chosen, 1)]
    signals = sorted((_signal(finding, chosen) for finding in findings), key=_signal_order)
    extra, graph = appendix(chosen, conversation, scrub)
    injected = resilience(chosen)
    files = f" + prices from {', '.join(prices_files)}" if prices_files else ""
    return Report(
        schemaVersion=1,
        pricing=library_version() + files,
        groupingBasis=grouping.name,  # type: ignore[arg-type]
        filter=Filter(
            session=selection.session,
            host=selection.host,
            provider=selection.provider,
            model=selection.model,
            since=_iso(selection.since) if selection.since else None,
            maxCalls=selection.max_calls,
            droppedCalls=dropped,
        ),
        sources=[
            Source(path=s.path, exchanges=s.exchanges, calls=s.calls, skipped=dict(sorted(s.skipped.items())))
            for s in sources
        ],
        sessions=_sessions(chosen),
        totals=totals,
        calls=rows,
        signals=signals,
        verdict=verdict(findings, totals, spend, Failures.of(chosen), injected),
        appendix=extra,
        callGraph=graph,
        resilience=injected,
        mcpTools=[tool_row(tally) for tally in tool_servers],
        redaction=Redaction(redactor="llmproxy cassette redactor", placeholders=scrub.replaced),
    )


def _retries(calls: Sequence[RecordedCall]) -> set[int]:
    """Calls that repeat one of the previous three calls of their session: same path, model, message count,
    system prompt and input tokens (MockServer's windowed retry rule)."""
    recent: dict[str, list[tuple[object, ...]]] = defaultdict(list)
    retries: set[int] = set()
    for index, call in enumerate(calls, 1):
        key = (call.path, call.model, call.message_count, call.system_fingerprint, call.usage.input_tokens)
        window = recent[call.session]
        if key in window:
            retries.add(index)
        window.append(key)
        del window[:-RETRY_WINDOW]
    return retries


def _totals(calls: Sequence[RecordedCall], retries: set[int], spend: Decimal) -> Totals:
    input_tokens = sum(call.usage.input_tokens for call in calls)
    cached = sum(call.usage.cache_read_tokens for call in calls)
    unpriced = [call for call in calls if isinstance(call.cost, Unpriced)]
    return Totals(
        callCount=len(calls),
        failedCallCount=sum(1 for call in calls if call.failed),
        pricedCallCount=len(calls) - len(unpriced),
        unpricedCallCount=len(unpriced),
        unpricedModels=sorted({call.model or "(unknown)" for call in unpriced}),
        inputTokens=input_tokens,
        cachedInputTokens=cached,
        cacheWriteTokens=sum(call.usage.cache_write_tokens for call in calls),
        outputTokens=sum(call.usage.output_tokens for call in calls),
        reasoningTokens=sum(call.usage.reasoning_tokens for call in calls),
        estimatedCostUsd=money(spend),
        costIsEstimated=any(isinstance(c.cost, Priced) and c.cost.estimated for c in calls) or bool(unpriced),
        totalLatencyMs=round(sum(call.latency_ms or 0.0 for call in calls), 3),
        toolCallCount=sum(len(call.tool_calls) for call in calls),
        cacheHitRatio=ratio(cached / input_tokens) if input_tokens else 0.0,
        oneShotRate=ratio(1 - len(retries) / len(calls)) if calls else 1.0,
        retryCallCount=len(retries),
        providers=sorted({call.provider.value for call in calls}),
        models=sorted({call.model for call in calls if call.model}),
    )


def _row(index: int, call: RecordedCall, retry: bool, scrub: Scrubber) -> CallRow:
    usage, cost = call.usage, call.cost
    return CallRow(
        index=index,
        session=call.session,
        source=call.source,
        exchangeId=call.exchange_id,
        startedAt=_iso(call.started_at),
        provider=call.provider.value,
        vendor=call.vendor,
        host=call.host,
        path=call.path,
        model=call.model,
        status=call.status,
        error=scrub.text(call.error) if call.error else None,
        inputTokens=usage.input_tokens,
        cachedInputTokens=usage.cache_read_tokens,
        cacheWriteTokens=usage.cache_write_tokens,
        cacheWrite1hTokens=usage.cache_write_1h_tokens,
        outputTokens=usage.output_tokens,
        reasoningTokens=usage.reasoning_tokens,
        tokensEstimated=usage.estimated,
        estimatedCostUsd=money(cost.usd) if isinstance(cost, Priced) else None,
        costIsEstimated=cost.estimated if isinstance(cost, Priced) else True,
        pricing=_pricing(cost),
        latencyMs=_float(call.latency_ms),
        ttfbMs=_float(call.ttfb_ms),
        toolCalls=[ToolCallRow(id=u.id, name=u.name, arguments=scrub.text(u.arguments)) for u in call.tool_calls],
        finishReason=call.finish_reason,
        messageCount=call.message_count,
        systemPromptFingerprint=call.system_fingerprint,
        definedToolNames=list(call.defined_tools),
        definedToolTokens=call.defined_tool_tokens,
        retry=retry,
    )


def _float(value: float | None) -> float | None:
    """A row holds each value as its declared JSON type (the JSON renderer writes rows as they are): a whole
    number of milliseconds is still written 900.0."""
    return float(value) if value is not None else None


def _pricing(cost: Priced | Unpriced) -> str:
    if isinstance(cost, Unpriced):
        return f"unpriced: {cost.reason}"
    text = f"{cost.basis}: {cost.vendor} {cost.model}"
    return f"{text} ({cost.note})" if cost.note else text


def _sessions(calls: Sequence[RecordedCall]) -> list[SessionRow]:
    members: dict[str, list[int]] = defaultdict(list)
    for index, call in enumerate(calls, 1):
        members[call.session].append(index)
    rows = []
    for session, indices in sorted(members.items(), key=lambda item: (item[1][0], item[0])):
        group = [calls[i - 1] for i in indices]
        input_tokens = sum(c.usage.input_tokens for c in group)
        cached = sum(c.usage.cache_read_tokens for c in group)
        rows.append(
            SessionRow(
                id=session,
                callCount=len(group),
                firstCall=indices[0],
                lastCall=indices[-1],
                inputTokens=input_tokens,
                outputTokens=sum(c.usage.output_tokens for c in group),
                estimatedCostUsd=money(sum((c.cost.usd for c in group if isinstance(c.cost, Priced)), ZERO)),
                cacheHitRatio=ratio(cached / input_tokens) if input_tokens else 0.0,
            )
        )
    return rows


def _signal(finding: SignalFinding, calls: Sequence[RecordedCall]) -> Signal:
    apis = Counter((calls[index - 1].provider, calls[index - 1].operation) for index in finding.affected)
    provider, operation = min(apis, key=lambda api: (-apis[api], api[0].value, api[1].value))
    recommendation, fix = fix_for(finding.id, provider, operation)
    return Signal(
        id=finding.id,
        severity=finding.severity,  # type: ignore[arg-type]
        urgency=ratio(_WEIGHTS[finding.severity] * len(finding.affected) / len(calls)),
        title=TITLES[finding.id],
        detail=finding.detail,
        affectedCalls=list(finding.affected),
        estimatedWastedInputTokens=finding.wasted_input_tokens,
        estimatedSavingUsd=money(finding.saving) if finding.saving is not None else None,
        recommendation=recommendation,
        fix=fix,
        mcpTools=[McpToolRef(server=server, tool=tool) for server, tool in finding.mcp_tools],
    )


def _signal_order(signal: Signal) -> tuple[float, int, str]:
    return (-signal.urgency, _RANK[signal.severity], signal.id)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
