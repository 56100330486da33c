"""The report as one self-contained HTML page: inline CSS and SVG, no script, nothing fetched.

Charts (render/charts.py: cost per call, tokens per call split into uncached input / cache reads / output,
the cache-hit ratio per call), the call table, the call graph of the richest conversation, and the
opportunities. Every element carries `data-*` attributes with its figures, so tests (and people) can read
them from the DOM.
"""

from decimal import Decimal
from html import escape

from llmproxy.analysis.coverage import Coverage
from llmproxy.analysis.figures import calls_aside, dollars, percent, spend
from llmproxy.analysis.render.charts import (
    Bar,
    Scale,
    Segment,
    chart,
    count_tick,
    money_tick,
    nothing_to_draw,
    percent_tick,
)
from llmproxy.analysis.render.terminal import baseline_line
from llmproxy.analysis.report import CallGraph, CallRow, Report, Signal
from llmproxy.words import clip, plural

WIDTH = 760
_ROW, _NODE = 44, 340  # call graph: the height of a row, the width of a node
_NODE_LABEL = 52  # characters that fit in a node (the whole label is its hover text)
_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1000px;color:#1d2430;padding:0 16px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #d9dee7;padding-bottom:4px}
.verdict{display:flex;gap:18px;align-items:center;border:1px solid #d9dee7;border-radius:8px;padding:12px 16px}
.grade{font-size:40px;font-weight:700;width:56px;text-align:center;border-radius:8px;color:#fff}
.g-A,.g-B{background:#1f8a4c}.g-C{background:#c98a00}.g-D,.g-F{background:#c0392b}.g-none{background:#7b8794}
.kpis{display:grid;grid-template-columns:repeat(4,1fr);gap:10px;margin-top:12px}
.kpi{border:1px solid #d9dee7;border-radius:8px;padding:8px 12px}.kpi b{display:block;font-size:18px}
table{border-collapse:collapse;width:100%;font-size:13px}
td,th{border-bottom:1px solid #eef1f5;padding:4px 6px;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
svg text{font:11px system-ui,sans-serif;fill:#4a5568}
.legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}
.legend span.unpriced{background:#f1f3f6;border:1px dashed #9aa5b1;box-sizing:border-box}
.empty-chart{color:#4a5568;font-style:italic;border:1px dashed #d9dee7;border-radius:8px;padding:10px 14px}
svg text.value{font-size:10px}svg .axis-title{font-size:11px;fill:#1d2430}
.sig{border:1px solid #d9dee7;border-radius:8px;padding:10px 14px;margin:10px 0}.sev{font-weight:700;font-size:12px}
.verdict.failed{border:2px solid #c0392b}.reliability,.gap{color:#c0392b;font-weight:600}
.HIGH{color:#c0392b}.MEDIUM{color:#c98a00}.LOW{color:#4a5568}pre{background:#f5f7fa;padding:8px;overflow:auto}
"""
_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"  # the page may fetch nothing
_COLOURS = {"input": "#4c78a8", "cached": "#72b7b2", "output": "#f58518", "cost": "#54a24b", "cache": "#72b7b2"}


def render_html(report: Report) -> str:
    v, t = report.verdict, report.totals
    body = [
        "<h1>llmproxy report</h1>",
        _verdict(report),
        '<div class="kpis" data-testid="kpis">',
        _kpi("Estimated cost", spend(t), "cost"),
        _kpi("Calls", f"{t.callCount}{calls_aside(t)}", "calls"),
        _kpi("Cache hit", percent(t.cacheHitRatio), "cache-hit"),
        _kpi("One-shot", percent(t.oneShotRate), "one-shot"),
        "</div>",
        *(f'<p class="gap" data-testid="coverage">{escape(gap)}</p>' for gap in Coverage.of_report(report).gaps()),
        _baseline(report),
        "<h2>Cost per call</h2>",
        _cost_chart(report),
        "<h2>Tokens per call</h2>",
        _tokens_chart(report),
        "<h2>Cache hits per call</h2>",
        _cache_chart(report),
        "<h2>Calls</h2>",
        _table(report.calls),
        _injected(report),
        _mcp_tools(report),
        "<h2>Call graph</h2>",
        _graph(report.callGraph),
        "<h2>Opportunities</h2>",
        *(_signal(signal) for signal in report.signals),
    ]
    if not report.signals:
        body.append('<p data-testid="no-opportunities">No optimisation opportunities detected.</p>')
    body.append(
        f"<p><small>Prices: {escape(report.pricing)}. Costs are list-price estimates, not an invoice.</small></p>"
    )
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">'
        f"<title>llmproxy report — grade {v.grade}</title><style>{_STYLE}</style></head><body>"
    )
    return head + "\n".join(part for part in body if part) + "</body></html>\n"


def _verdict(report: Report) -> str:
    """The grade and what it rests on; a run whose calls failed, or that llmproxy injected faults into, says
    so in red beside it (a grade says what could be saved, not whether the run worked)."""
    v, t = report.verdict, report.totals
    rationale, health = v.rationale, ""
    badge = "none" if t.callCount and t.failedCallCount == t.callCount else v.grade  # nothing answered: no colour
    if v.reliability:
        rationale = rationale.removesuffix(f" {v.reliability}")
        health = f'<br><span class="reliability" data-testid="reliability">{escape(v.reliability)}</span>'
    return (
        f'<section class="verdict{" failed" if v.reliability else ""}" data-testid="verdict" data-grade="{v.grade}" '
        f'data-failed="{t.failedCallCount}"><div class="grade g-{badge}">{v.grade}</div><div>'
        f"<b>{_recoverable(report)}</b><br>{escape(rationale)}{health}</div></section>"
    )


def _baseline(report: Report) -> str:
    if report.baseline is None:
        return ""
    return f'<p data-testid="baseline">{escape(baseline_line(report))}</p>'


def _kpi(name: str, value: str, testid: str) -> str:
    return f'<div class="kpi" data-testid="kpi-{testid}">{escape(name)}<b>{escape(value)}</b></div>'


def _hit_ratio(call: CallRow) -> float:
    return call.cachedInputTokens / call.inputTokens if call.inputTokens else 0.0


def _cost_title(call: CallRow) -> str:
    cost = _usd(call.estimatedCostUsd) if call.estimatedCostUsd is not None else "unpriced (left out of the total)"
    return f"call {call.index} ({call.model}): {cost}"


def _cost_chart(report: Report) -> str:
    calls, failed = report.calls, report.totals.failedCallCount
    if not calls:
        return nothing_to_draw("chart-cost", 0, "No calls.")
    if all(call.estimatedCostUsd is None for call in calls):
        models = ", ".join(report.totals.unpricedModels)
        return nothing_to_draw(
            "chart-cost", len(calls), f"No call could be priced ({models}): there is no cost to draw."
        )
    if all(call.estimatedCostUsd is not None and Decimal(call.estimatedCostUsd) == 0 for call in calls):
        because = f" ({failed:,} failed)" if failed else ""
        return nothing_to_draw("chart-cost", len(calls), f"Every call cost $0.00: nothing was billed{because}.")
    bars = [
        Bar(
            call.index,
            (Segment("cost", float(call.estimatedCostUsd), _COLOURS["cost"]),),
            _usd(call.estimatedCostUsd),
            _cost_title(call),
        )
        if call.estimatedCostUsd is not None
        else Bar(call.index, (), "unpriced", _cost_title(call))
        for call in calls
    ]
    legend = ""
    if any(call.estimatedCostUsd is None for call in calls):
        legend = (
            f'<p class="legend" data-testid="chart-cost-legend"><span style="background:{_COLOURS["cost"]}"></span>'
            'estimated cost<span class="unpriced"></span>unpriced: no price is known for the model, so the call '
            "is left out of the total</p>"
        )
    return legend + chart("chart-cost", bars, Scale("USD per call", money_tick))


def _tokens_chart(report: Report) -> str:
    calls, failed = report.calls, report.totals.failedCallCount
    if not any(call.inputTokens or call.outputTokens for call in calls):
        words = f"No call reported any tokens ({plural(len(calls), 'call')}{f', {failed:,} failed' if failed else ''})."
        return nothing_to_draw("chart-tokens", len(calls), words if calls else "No calls.")
    bars = []
    for call in calls:
        segments = tuple(
            Segment(kind, amount, _COLOURS[kind])
            for kind, amount in (
                ("input", call.inputTokens - call.cachedInputTokens),
                ("cached", call.cachedInputTokens),
                ("output", call.outputTokens),
            )
        )
        title = (
            f"call {call.index}: {call.inputTokens - call.cachedInputTokens:,} uncached input, "
            f"{call.cachedInputTokens:,} read from cache, {call.outputTokens:,} output tokens"
        )
        bars.append(Bar(call.index, segments, f"{call.inputTokens + call.outputTokens:,}", title))
    legend = (
        '<p class="legend"><span style="background:#4c78a8"></span>uncached input<span style="background:#72b7b2">'
        '</span>read from cache<span style="background:#f58518"></span>output</p>'
    )
    return legend + chart("chart-tokens", bars, Scale("tokens per call", count_tick, whole=True), stacked=True)


def _cache_chart(report: Report) -> str:
    calls = report.calls
    if not any(call.cachedInputTokens for call in calls):
        words = f"No call read anything from the prompt cache: 0% of {report.totals.inputTokens:,} input tokens."
        return nothing_to_draw("chart-cache", len(calls), words if calls else "No calls.")
    bars = [
        Bar(
            call.index,
            (Segment("cache", _hit_ratio(call), _COLOURS["cache"]),),
            percent(_hit_ratio(call)),
            f"call {call.index}: {percent(_hit_ratio(call))} of {call.inputTokens:,} input tokens read from cache",
        )
        for call in calls
    ]
    return chart("chart-cache", bars, Scale("share of input read from cache", percent_tick, top=1.0))


def _table(calls: list[CallRow]) -> str:
    rows = [
        '<table data-testid="calls"><thead><tr><th class="n">#</th><th>model</th><th class="n">input</th>'
        '<th class="n">cached</th><th class="n">output</th><th class="n">cost</th><th class="n">latency</th>'
        "<th>tools</th><th>finish</th></tr></thead><tbody>"
    ]
    for call in calls:
        cost = _usd(call.estimatedCostUsd) if call.estimatedCostUsd is not None else "unpriced"
        cost += "~" if call.costIsEstimated and call.estimatedCostUsd is not None else ""
        latency = f"{call.latencyMs:,.0f} ms" if call.latencyMs is not None else "—"
        tools = ", ".join(tool.name for tool in call.toolCalls) or "—"
        finish = call.finishReason or (f"status {call.status}" if call.status else "no response")
        rows.append(
            f'<tr data-call="{call.index}"><td class="n">{call.index}</td><td>{escape(call.model or "?")}</td>'
            f'<td class="n">{call.inputTokens:,}</td><td class="n">{call.cachedInputTokens:,}</td>'
            f'<td class="n">{call.outputTokens:,}</td><td class="n">{cost}</td><td class="n">{latency}</td>'
            f"<td>{escape(tools)}</td><td>{escape(finish)}</td></tr>"
        )
    return "".join(rows) + "</tbody></table>"


def _injected(report: Report) -> str:
    """The faults llmproxy injected on purpose, and what the client did after each."""
    r = report.resilience
    if r is None:
        return ""
    rows = [
        f"<h2>Injected faults</h2><p>{escape(r.counted())}: {escape(r.verdict)}</p>"
        f'<table data-testid="injected" data-recovered="{str(r.recovered).lower()}"><thead><tr><th class="n">#</th>'
        "<th>fault</th><th>rule</th><th>what the client did next</th></tr></thead><tbody>"
    ]
    rows += [
        f'<tr data-kind="{escape(f.kind)}"><td class="n">{f.call}</td><td>{escape(f"{f.kind}: {f.detail}")}</td>'
        f"<td>{escape(f.rule)}</td><td>{escape(f.followed)}</td></tr>"
        for f in r.faults
    ]
    return "".join(rows) + "</tbody></table>"


def _mcp_tools(report: Report) -> str:
    """The MCP tool calls beside the model calls, per server and tool."""
    if not report.mcpTools:
        return ""
    rows = [
        '<h2>MCP tool calls</h2><table data-testid="mcp-tools"><thead><tr><th>server</th><th>tool</th>'
        '<th class="n">calls</th><th class="n">errors</th><th class="n">mean latency</th>'
        '<th class="n">result bytes</th></tr></thead><tbody>'
    ]
    rows += [
        f'<tr><td>{escape(row.server)}</td><td>{escape(row.tool)}</td><td class="n">{row.calls}</td>'
        f'<td class="n">{row.errors}</td><td class="n">{row.meanLatencyMs:,.0f} ms</td>'
        f'<td class="n">{row.resultBytes:,}</td></tr>'
        for row in report.mcpTools
    ]
    return "".join(rows) + "</tbody></table>"


def _graph(graph: CallGraph | None) -> str:
    """Messages down the left, each tool call to the right of the turn that made it; RESULT edges dashed."""
    if graph is None or not graph.nodes:
        return '<p data-testid="call-graph">No conversation to draw.</p>'
    place: dict[str, tuple[float, float]] = {}
    row, beside = -1, 0
    for node in graph.nodes:
        if node.kind == "TOOL_CALL":  # beside the message that made it, one under the other
            place[node.id] = (400.0, 12 + row * _ROW + beside * 34)
            beside += 1
        else:
            row += 1 + max(0, beside - 1)
            beside = 0
            place[node.id] = (12.0, 12 + row * _ROW)
    height = 24 + (row + 1 + max(0, beside - 1)) * _ROW
    parts = [
        f'<svg data-testid="call-graph" data-nodes="{len(graph.nodes)}" data-edges="{len(graph.edges)}" '
        f'viewBox="0 0 {WIDTH} {height}" width="100%" xmlns="http://www.w3.org/2000/svg">'
    ]
    for edge in graph.edges:
        (x1, y1), (x2, y2) = place[edge.from_], place[edge.to]
        if edge.kind == "NEXT":
            line = (x1 + 24, y1 + 30, x2 + 24, y2)
        elif edge.kind == "INVOKES":
            line = (x1 + _NODE, y1 + 15, x2, y2 + 15)
        else:
            line = (x1 + _NODE / 2, y1 + 30, x2 + _NODE, y2 + 15)
        dash = ' stroke-dasharray="4 3"' if edge.kind == "RESULT" else ""
        parts.append(
            f'<line class="edge" data-kind="{edge.kind}" x1="{line[0]:.0f}" y1="{line[1]:.0f}" x2="{line[2]:.0f}" '
            f'y2="{line[3]:.0f}" stroke="#9aa5b1"{dash}/>'
        )
    for node in graph.nodes:
        x, y = place[node.id]
        fill = "#fdebd0" if node.kind == "TOOL_CALL" else "#e8eef7"
        label = escape(clip(f"{node.kind}: {node.label}", _NODE_LABEL))
        parts.append(
            f'<g class="node" data-id="{node.id}" data-kind="{node.kind}"><rect x="{x}" y="{y}" width="{_NODE}" '
            f'height="30" rx="6" fill="{fill}"/><text x="{x + 8}" y="{y + 19}">{label}</text>'
            f"<title>{escape(node.label)}</title></g>"
        )
    return "".join(parts) + "</svg>"


def _signal(signal: Signal) -> str:
    saving = _usd(signal.estimatedSavingUsd) if signal.estimatedSavingUsd is not None else "not priced"
    snippet = f"<pre>{escape(signal.fix.configSnippet)}</pre>" if signal.fix.configSnippet else ""
    return (
        f'<div class="sig" data-testid="signal" data-signal="{signal.id}" data-severity="{signal.severity}">'
        f'<span class="sev {signal.severity}">{signal.severity}</span> <b>{escape(signal.title)}</b> '
        f"<code>{signal.id}</code><p>{escape(signal.detail)}</p>"
        f"<p>Calls {', '.join(map(str, signal.affectedCalls))} · est. saving {saving}</p>"
        f"<p><b>{escape(signal.fix.summary)}</b> — {escape(signal.fix.action)}</p>{snippet}</div>"
    )


def _recoverable(report: Report) -> str:
    v, t = report.verdict, report.totals
    if t.unpricedCallCount and not t.pricedCallCount:
        return f"Est. {v.totalWastedInputTokens:,} tokens recoverable ({percent(v.savingFractionOfSpend)} of input)"
    return f"Est. {_usd(v.totalEstimatedSavingUsd)} recoverable ({percent(v.savingFractionOfSpend)} of spend)"


def _usd(amount: str) -> str:
    return dollars(Decimal(amount))
