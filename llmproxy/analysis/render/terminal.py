"""The report for a terminal (rich): the verdict, the totals, the per-call table, the top opportunities."""

import io
from decimal import Decimal

from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from llmproxy.analysis.coverage import Coverage
from llmproxy.analysis.figures import calls_aside, dollars, percent, spend, verdict_sentence
from llmproxy.analysis.report import Report
from llmproxy.words import plural

TOP_SIGNALS = 5
_LONGEST_MODEL = 40  # a model name longer than this may wrap
_GRADE_STYLE = {"A": "green", "B": "green", "C": "yellow", "D": "red", "F": "red"}


def terminal_view(report: Report) -> RenderableType:
    v, t = report.verdict, report.totals
    headline = Text.assemble(("Grade ", "bold"), (v.grade, f"bold {_grade_style(report)}"), f" — {verdict_sentence(v)}")
    facts = Text(
        f"{plural(t.callCount, 'call')}{calls_aside(t)} · {spend(t)} · {t.inputTokens:,} in "
        f"({percent(t.cacheHitRatio)} cached) / {t.outputTokens:,} out tokens · "
        f"{plural(t.toolCallCount, 'tool call')} · one-shot {percent(t.oneShotRate)}"
    )
    lines = [headline, facts, *(Text(gap, style="bold") for gap in Coverage.of_report(report).gaps())]
    if report.baseline is not None:
        lines.append(Text(baseline_line(report)))
    border = "red" if v.reliability else "none"
    verdict = Panel(Group(*lines), title="llmproxy report", expand=False, border_style=border)
    return Group(verdict, _calls(report), *_injected(report), *_mcp_tools(report), _signals(report))


def _grade_style(report: Report) -> str:
    """The grade's colour; none when no call was answered (a grade of nothing saved is not good news)."""
    t = report.totals
    return "" if t.callCount and t.failedCallCount == t.callCount else _GRADE_STYLE[report.verdict.grade]


def baseline_line(report: Report) -> str:
    """`--baseline` in one line: the grade, the cost, and which signals are new or resolved."""
    c = report.baseline
    assert c is not None
    cost = f", cost {c.costIncrease:+.0%}" if c.costIncrease is not None else ""
    new = [s.id for s in c.signals if s.status == "new"]
    resolved = [s.id for s in c.signals if s.status == "resolved"]
    changes = "".join(f"; {label}: {', '.join(ids)}" for label, ids in (("new", new), ("resolved", resolved)) if ids)
    return f"vs {c.baseline}: grade {c.previousGrade} → {c.grade}{cost}{changes}"


def render_terminal(report: Report, width: int = 120) -> str:
    """The same view as text without colour (for `-o FILE` and tests)."""
    console = Console(width=width, record=True, color_system=None, force_terminal=False, file=io.StringIO())
    console.print(terminal_view(report))
    return console.export_text()


def _calls(report: Report) -> Table:
    """One row per call. At 80 columns every figure and model name stays whole: no column rules, and the
    last column — the tools an answer called, else how it finished — is the one that wraps."""
    table = Table(title="Calls", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, padding=0)
    longest = max((len(call.model or "?") for call in report.calls), default=5)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("model", no_wrap=True, min_width=min(longest, _LONGEST_MODEL))
    for name in ("in", "cached", "out", "cost", "latency"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("tools, or finish", overflow="fold")
    for call in report.calls:
        cost = dollars(Decimal(call.estimatedCostUsd)) if call.estimatedCostUsd is not None else "unpriced"
        tools = ", ".join(tool.name for tool in call.toolCalls)
        table.add_row(
            str(call.index),
            call.model or "?",
            f"{call.inputTokens:,}",
            f"{call.cachedInputTokens:,}",
            f"{call.outputTokens:,}",
            cost + ("~" if call.costIsEstimated and call.estimatedCostUsd is not None else ""),
            f"{call.latencyMs:,.0f} ms" if call.latencyMs is not None else "—",
            f"→ {tools}" if tools else call.finishReason or (f"status {call.status}" if call.status else "no response"),
        )
    return table


def _injected(report: Report) -> list[RenderableType]:
    """The faults llmproxy injected on purpose, and what the client did after each."""
    r = report.resilience
    if r is None:
        return []
    table = Table(title=f"Injected faults ({r.counted()}): {r.verdict}", title_justify="left")
    for name in ("#", "fault", "rule", "next"):
        table.add_column(name)
    for fault in r.faults:
        table.add_row(str(fault.call), f"{fault.kind}: {fault.detail}", fault.rule, fault.followed)
    return [table]


def _mcp_tools(report: Report) -> list[RenderableType]:
    """The MCP tool calls beside the model calls, per server and tool."""
    if not report.mcpTools:
        return []
    table = Table(title="MCP tool calls", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    for name in ("server", "tool", "calls", "errors", "mean ms", "result bytes"):
        table.add_column(name, justify="left" if name in ("server", "tool") else "right")
    for row in report.mcpTools:
        table.add_row(
            row.server, row.tool, str(row.calls), str(row.errors), f"{row.meanLatencyMs:,.0f}", f"{row.resultBytes:,}"
        )
    return [table]


def _signals(report: Report) -> RenderableType:
    if not report.signals:
        return Text("No optimisation opportunities detected.")
    table = Table(title="Top opportunities", title_justify="left")
    for name in ("signal", "severity", "calls", "saving", "fix"):
        table.add_column(name)
    for signal in report.signals[:TOP_SIGNALS]:
        saving = dollars(Decimal(signal.estimatedSavingUsd)) if signal.estimatedSavingUsd is not None else "—"
        table.add_row(signal.id, signal.severity, str(len(signal.affectedCalls)), saving, signal.fix.summary)
    hidden = len(report.signals) - TOP_SIGNALS
    if hidden <= 0:
        return table
    more = plural(hidden, "more opportunity", "more opportunities")
    return Group(table, Text(f"{more} not shown here: --format markdown lists every one"))
