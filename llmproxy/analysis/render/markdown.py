"""The brief: the report as Markdown to read, or to paste into an assistant for advice.

Sections in MockServer's frozen order: the framing preamble, `## Verdict`, the run summary, the per-call
table, the opportunities (most urgent first), then the redacted conversations and tool definitions.
"""

from decimal import Decimal

from llmproxy.analysis.coverage import Coverage
from llmproxy.analysis.figures import dollars, grade_change, percent, spend, verdict_sentence
from llmproxy.analysis.report import CallRow, Report, Signal
from llmproxy.words import clip, plural

PREAMBLE = """# LLM optimisation brief

You are reviewing a recorded run of an LLM-powered application, captured by llmproxy. Every number below
was computed deterministically from the recorded traffic; costs are estimates from list prices, not an
invoice. Using the verdict, the per-call data and the detected opportunities, recommend concrete changes
that lower cost and latency without changing what the application does. Rank them by expected saving,
say what to change (code, prompt, configuration) and how to check the change worked. Secrets were
redacted before this brief was written."""


def render_markdown(report: Report) -> str:
    parts = [
        PREAMBLE,
        _verdict(report),
        _summary(report),
        _calls(report),
        _opportunities(report),
        _comparison(report),
        _injected(report),
        _mcp_tools(report),
        _appendix(report),
    ]
    return "\n\n".join(part for part in parts if part) + "\n"


def _verdict(report: Report) -> str:
    v, t = report.verdict, report.totals
    if t.unpricedCallCount and not t.pricedCallCount:  # the fraction is then of input tokens
        recoverable = f"Est. {v.totalWastedInputTokens:,} tokens recoverable; no call could be priced"
    else:
        recoverable = (
            f"Est. {_usd(v.totalEstimatedSavingUsd)} ({percent(v.savingFractionOfSpend)} of spend) / "
            f"{v.totalWastedInputTokens:,} tokens recoverable"
        )
    estimate = " (estimate)" if v.costIsEstimated and t.pricedCallCount else ""
    return "\n".join(
        [
            "## Verdict",
            "",
            f"**Grade {v.grade}.** {verdict_sentence(v)}",
            "",
            f"- {recoverable}{estimate}",
            f"- Cache hit: {percent(t.cacheHitRatio)}",
            f"- One-shot: {percent(t.oneShotRate)}",
            *([f"- **Failed calls: {t.failedCallCount:,} of {t.callCount:,}**"] if t.failedCallCount else []),
            *(f"- **{gap}**" for gap in Coverage.of_report(report).gaps()),
        ]
    )


def _summary(report: Report) -> str:
    t = report.totals
    unpriced = (
        f" — {plural(t.unpricedCallCount, 'unpriced call')} left out ({', '.join(t.unpricedModels)})"
        if t.unpricedCallCount
        else ""
    )
    lines = [
        "## Run summary",
        "",
        f"- Providers: {', '.join(t.providers) or '—'}",
        f"- Models: {', '.join(t.models) or '—'}",
        f"- Calls: {t.callCount} in {plural(len(report.sessions), 'session')}, "
        f"grouped by {report.groupingBasis.lower()}",
        f"- Tokens: {t.inputTokens:,} input ({t.cachedInputTokens:,} read from cache, {t.cacheWriteTokens:,} written "
        f"to it), {t.outputTokens:,} output ({t.reasoningTokens:,} reasoning)",
        f"- Estimated cost: {spend(t)}{unpriced}",
        f"- Latency: {t.totalLatencyMs / 1000:,.2f} s in total",
        f"- Tool calls: {t.toolCallCount}",
        f"- Cache-hit rate: {percent(t.cacheHitRatio)}; one-shot rate: {percent(t.oneShotRate)} "
        f"({t.retryCallCount} retries)",
        f"- Prices: {report.pricing}",
    ]
    return "\n".join(lines)


def _calls(report: Report) -> str:
    lines = [
        "## Calls",
        "",
        "| # | model | in tok | out tok | cost | latency | tools | finish |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [_call_line(call) for call in report.calls]
    return "\n".join(lines)


def _call_line(call: CallRow) -> str:
    cost = _usd(call.estimatedCostUsd) if call.estimatedCostUsd is not None else "unpriced"
    if call.estimatedCostUsd is not None and call.costIsEstimated:
        cost += "~"
    latency = f"{call.latencyMs:,.0f} ms" if call.latencyMs is not None else "—"
    tools = ", ".join(tool.name for tool in call.toolCalls) or "—"
    finish = call.finishReason or (f"status {call.status}" if call.status else "no response")
    cached = f" ({call.cachedInputTokens:,} cached)" if call.cachedInputTokens else ""
    return (
        f"| {call.index} | {_cell(call.model or '?')} | {call.inputTokens:,}{cached} | {call.outputTokens:,} | {cost} "
        f"| {latency} | {_cell(tools)} | {finish} |"
    )


def _opportunities(report: Report) -> str:
    if not report.signals:
        return "## Detected opportunities\n\nNone: no signal fired on this run."
    return "\n\n".join(["## Detected opportunities", *(_signal(signal) for signal in report.signals)])


def _signal(signal: Signal) -> str:
    saving = _usd(signal.estimatedSavingUsd) if signal.estimatedSavingUsd is not None else "not priced"
    wasted = (
        f"{signal.estimatedWastedInputTokens:,} input tokens"
        if signal.estimatedWastedInputTokens is not None
        else "not counted in input tokens"
    )
    lines = [
        f"### {signal.title} (`{signal.id}`, {signal.severity.lower()}, urgency {signal.urgency:.2f})",
        "",
        signal.detail,
        "",
        f"- Affected calls: {', '.join(map(str, signal.affectedCalls))}",
        f"- Estimated saving: {saving}; wasted: {wasted}",
        f"- Recommendation: {signal.recommendation}",
        f"- Fix: **{signal.fix.summary}** — {signal.fix.action}",
    ]
    if signal.fix.configSnippet:
        lines += ["", "```json", signal.fix.configSnippet, "```"]
    if signal.fix.exampleExpectation:
        lines += ["", "Example llmproxy mock expectation:", "", "```json", signal.fix.exampleExpectation, "```"]
    if signal.fix.docsUrl:
        lines += ["", f"Docs: {signal.fix.docsUrl}"]
    return "\n".join(lines)


def _comparison(report: Report) -> str:
    """`--baseline`: after the opportunities, before the appendix (the seed's sections keep their order)."""
    c = report.baseline
    if c is None:
        return ""
    lines = [
        "## Compared with the baseline",
        "",
        f"Baseline: {c.baseline}. Grade {c.previousGrade} → {c.grade}"
        + f" ({grade_change(c.gradeDrop)})"
        + (f"; cost {c.costIncrease:+.0%}" if c.costIncrease is not None else ""),
        "",
        "| signal | status | severity | saving (was) |",
        "|---|---|---|---|",
    ]
    for change in c.signals:
        was = _usd(change.previousEstimatedSavingUsd) if change.previousEstimatedSavingUsd else "—"
        now = _usd(change.estimatedSavingUsd) if change.estimatedSavingUsd else "—"
        lines.append(f"| `{change.id}` | {change.status} | {change.severity.lower()} | {now} ({was}) |")
    lines += ["", "| KPI | baseline | now | change |", "|---|---|---|---|"]
    lines += [f"| {k.name} | {_kpi(k.previous)} | {_kpi(k.current)} | {_kpi(k.delta, signed=True)} |" for k in c.kpis]
    return "\n".join(lines)


def _injected(report: Report) -> str:
    """The faults llmproxy injected on purpose (docs/chaos.md): not the application's doing, but how it coped."""
    r = report.resilience
    if r is None:
        return ""
    lines = [
        "## Injected faults",
        "",
        f"llmproxy injected {plural(len(r.faults), 'fault')} on purpose ({r.counted()}); {r.verdict}.",
        "",
        "| call | fault | rule | what the client did next |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {f.call} | {_cell(f'{f.kind}: {f.detail}')} | {_cell(f.rule)} | {_cell(f.followed)} |" for f in r.faults
    ]
    return "\n".join(lines)


def _mcp_tools(report: Report) -> str:
    """The MCP tool calls beside the model calls: what each tool cost in time and in results fed back."""
    if not report.mcpTools:
        return ""
    lines = [
        "## MCP tool calls",
        "",
        "| server | tool | calls | errors | mean latency | result bytes | largest result |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {_cell(row.server)} | {_cell(row.tool)} | {row.calls} | {row.errors} | {row.meanLatencyMs:,.0f} ms"
        f" | {row.resultBytes:,} | {row.largestResultBytes:,} |"
        for row in report.mcpTools
    ]
    return "\n".join(lines)


def _appendix(report: Report) -> str:
    lines = ["## Appendix: conversations and tool definitions (redacted)"]
    for conversation in report.appendix.conversations:
        lines += ["", f"### Session {conversation.session} (call {conversation.call})", ""]
        if conversation.system:
            lines += ["System:", "", _fenced(conversation.system), ""]
        for number, message in enumerate(conversation.messages, 1):
            head = f"{number}. **{message.role}**"
            if message.toolCalls:
                head += " calls " + ", ".join(f"`{call.name}` {call.arguments}" for call in message.toolCalls)
            if message.toolResults:
                head += " returns results of " + ", ".join(f"`{name}`" for name in message.toolResults)
            lines.append(head)
            if message.text:
                lines += ["", _fenced(message.text, indent="   "), ""]
    if report.appendix.toolDefinitions:
        lines += ["", "### Tool definitions", "", "| tool | offered on | called | description |", "|---|---|---|---|"]
        for tool in report.appendix.toolDefinitions:
            description = _cell(clip(tool.description, 160))
            lines.append(f"| `{tool.name}` | {tool.calls} calls | {tool.invoked} times | {description} |")
    return "\n".join(lines)


def _kpi(value: int | float | str, signed: bool = False) -> str:
    """A KPI as the JSON has it (money stays an exact decimal string), counts with thousands separators."""
    if isinstance(value, str):
        return f"+{value}" if signed and not value.startswith("-") and value != "0" else value
    if isinstance(value, int):
        return f"{value:+,}" if signed else f"{value:,}"
    return f"{value:+g}" if signed else f"{value:g}"


def _usd(amount: str) -> str:
    return dollars(Decimal(amount))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fenced(text: str, indent: str = "") -> str:
    fence = "````" if "```" in text else "```"
    body = "\n".join(indent + line for line in text.splitlines())
    return f"{indent}{fence}text\n{body}\n{indent}{fence}"
