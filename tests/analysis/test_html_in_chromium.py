"""The HTML report opened in a real headless Chromium: it fetches nothing, and its charts, table, call graph
and opportunities say what the report says, read back from the DOM."""

from decimal import Decimal
from pathlib import Path

from llmproxy.analysis.render import render
from tests.analysis.browser import opened
from tests.analysis.reports import report_of


def test_the_html_report_in_chromium(tmp_path: Path) -> None:
    report = report_of("cassettes")
    page_file = tmp_path / "report.html"
    page_file.write_text(render(report, "html"), encoding="utf-8")
    with opened(page_file) as (page, requested):
        assert requested == [page_file.resolve().as_uri()]  # self-contained: nothing else is fetched
        assert page.title() == f"llmproxy report — grade {report.verdict.grade}"
        assert page.get_attribute("[data-testid=verdict]", "data-grade") == report.verdict.grade

        bars = page.locator("[data-testid=chart-cost] rect.bar")
        assert bars.count() == report.totals.callCount
        costs = [Decimal(bars.nth(i).get_attribute("data-value") or "") for i in range(bars.count())]
        assert costs == [Decimal(c.estimatedCostUsd or "0") for c in report.calls]
        heights = [float(bars.nth(i).get_attribute("height") or "") for i in range(bars.count())]
        assert heights.index(max(heights)) == costs.index(max(costs))  # the tallest bar is the dearest call

        segments = page.locator("[data-testid=chart-tokens] rect.segment")
        assert segments.count() == 3 * report.totals.callCount
        tokens = {
            (int(segments.nth(i).get_attribute("data-call") or ""), segments.nth(i).get_attribute("data-kind")): int(
                segments.nth(i).get_attribute("data-tokens") or ""
            )
            for i in range(segments.count())
        }
        for call in report.calls:
            assert tokens[call.index, "cached"] == call.cachedInputTokens
            assert tokens[call.index, "input"] + tokens[call.index, "cached"] == call.inputTokens
            assert tokens[call.index, "output"] == call.outputTokens
        hits = page.locator("[data-testid=chart-cache] rect.bar")
        assert sum(1 for i in range(hits.count()) if float(hits.nth(i).get_attribute("data-value") or "") > 0) == sum(
            1 for c in report.calls if c.cachedInputTokens
        )

        rows = page.locator("[data-testid=calls] tbody tr")
        assert rows.count() == report.totals.callCount
        first = rows.nth(0).locator("td")
        assert first.nth(1).inner_text() == report.calls[0].model
        assert page.inner_text("[data-testid=kpi-calls] b").startswith(str(report.totals.callCount))

        graph = report.callGraph
        assert graph is not None
        assert page.locator("[data-testid=call-graph] g.node").count() == len(graph.nodes)
        kinds = page.locator("[data-testid=call-graph] line.edge")
        assert sorted(kinds.nth(i).get_attribute("data-kind") or "" for i in range(kinds.count())) == sorted(
            edge.kind for edge in graph.edges
        )

        signals = page.locator("[data-testid=signal]")
        assert [signals.nth(i).get_attribute("data-signal") for i in range(signals.count())] == [
            s.id for s in report.signals
        ]
