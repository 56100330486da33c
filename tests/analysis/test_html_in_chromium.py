"""The HTML report opened in a real headless Chromium: it fetches nothing, and its charts, table, call graph
and opportunities say what the report says, read back from the DOM."""

from contextlib import AbstractContextManager
from decimal import Decimal
from pathlib import Path

import orjson
import pytest
from playwright.sync_api import Page

from llmproxy.analysis.figures import dollars
from llmproxy.analysis.render import render
from llmproxy.analysis.report import Report
from tests.analysis.browser import opened
from tests.analysis.reports import CRAFTED_RUNS, question, recorded, report_of
from tests.cassette.factory import exchange, request, response

pytestmark = pytest.mark.service


def test_the_html_report_in_chromium(tmp_path: Path) -> None:
    report = report_of("cassettes")
    page_file = tmp_path / "report.html"
    page_file.write_text(render(report, "html"), encoding="utf-8")
    with opened(page_file) as (page, requested):
        assert requested == [page_file.resolve().as_uri()]  # self-contained: nothing else is fetched
        assert page.title() == f"llmproxy report — grade {report.verdict.grade}"
        assert page.get_attribute("[data-testid=verdict]", "data-grade") == report.verdict.grade

        bars = page.locator("[data-testid=chart-cost] rect.bar:not(.unpriced)")
        priced = [c for c in report.calls if c.estimatedCostUsd is not None]
        assert bars.count() == len(priced) == report.totals.pricedCallCount
        costs = [Decimal(bars.nth(i).get_attribute("data-value") or "") for i in range(bars.count())]
        assert costs == [Decimal(c.estimatedCostUsd or "") for c in priced]
        heights = [float(bars.nth(i).get_attribute("height") or "") for i in range(bars.count())]
        assert heights.index(max(heights)) == costs.index(max(costs))  # the tallest bar is the dearest call
        unpriced = page.locator("[data-testid=chart-cost] rect.bar.unpriced")
        assert [int(unpriced.nth(i).get_attribute("data-call") or "") for i in range(unpriced.count())] == [
            c.index for c in report.calls if c.estimatedCostUsd is None
        ]

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


def opened_report(tmp_path: Path, report: Report) -> "AbstractContextManager[tuple[Page, list[str]]]":
    page_file = tmp_path / "report.html"
    page_file.write_text(render(report, "html"), encoding="utf-8")
    return opened(page_file)


def numbers(page: Page, selector: str, attribute: str = "data-value") -> list[float]:
    found = page.locator(selector)
    return [float(found.nth(i).get_attribute(attribute) or "nan") for i in range(found.count())]


def test_each_chart_has_axes_with_values(tmp_path: Path) -> None:
    report = report_of(*CRAFTED_RUNS)  # few enough calls for each bar to have its value written
    calls = report.calls
    with opened_report(tmp_path, report) as (page, _):
        for chart, largest in (
            ("chart-cost", max(float(c.estimatedCostUsd or 0) for c in calls)),
            ("chart-tokens", max(c.inputTokens + c.outputTokens for c in calls)),
            ("chart-cache", max(c.cachedInputTokens / c.inputTokens for c in calls if c.inputTokens)),
        ):
            svg = f"[data-testid={chart}]"
            ticks = numbers(page, f"{svg} .axis-y text")
            assert len(ticks) >= 3, chart
            assert ticks == sorted(ticks)
            assert ticks[0] == 0
            assert ticks[-1] >= largest  # every bar is under the top of the scale
            labels = page.locator(f"{svg} .axis-y text")
            assert all((labels.nth(i).text_content() or "").strip() for i in range(labels.count()))
            x = [int(v) for v in numbers(page, f"{svg} .axis-x text")]
            assert (x[0], x[-1]) == (1, len(calls))
            assert page.locator(f"{svg} .axis-title").count() == 2  # what each axis measures
            assert page.locator(f"{svg} .axis-y line").count() == len(ticks)
        # with few enough calls, each bar's value is written on it
        values = page.locator("[data-testid=chart-cost] text.value")
        assert values.count() == len(calls)
        assert [values.nth(i).text_content() for i in range(values.count())] == [
            dollars(Decimal(c.estimatedCostUsd or "0")) for c in calls
        ]


def test_unpriced_calls_are_not_drawn_as_zero_and_an_all_zero_chart_says_so(tmp_path: Path) -> None:
    path = recorded(
        tmp_path / "mixed.json",
        [question(0), question(1, model="house-model-7"), question(2, status=529), question(3, usage=(400, 100))],
    )
    report = report_of(path)
    assert [c.estimatedCostUsd is None for c in report.calls] == [False, True, False, False]
    with opened_report(tmp_path, report) as (page, _):
        bars = page.locator("[data-testid=chart-cost] rect.bar")
        assert bars.count() == 4
        unpriced = page.locator("[data-testid=chart-cost] rect.bar.unpriced")
        assert unpriced.count() == 1
        assert unpriced.get_attribute("data-call") == "2"
        assert unpriced.get_attribute("data-value") is None  # no figure: not a cost of $0
        assert float(unpriced.get_attribute("height") or 0) > 0  # drawn, where a $0 call has no bar
        zero = page.locator("[data-testid=chart-cost] rect.bar[data-call='3']")
        assert (zero.get_attribute("data-value"), float(zero.get_attribute("height") or 1)) == ("0", 0)
        assert "unpriced" in page.inner_text("[data-testid=chart-cost-legend]")
        labels = page.locator("[data-testid=chart-cost] text.value")
        assert [labels.nth(i).text_content() for i in range(labels.count())] == [
            "$0.0004",
            "unpriced",
            "$0.00",
            "$0.0009",
        ]

        cache = page.locator("[data-testid=chart-cache]")  # nothing was read from a cache: words, not an empty box
        assert cache.evaluate("element => element.tagName") == "P"
        assert cache.inner_text() == "No call read anything from the prompt cache: 0% of 600 input tokens."

    failed = report_of("cassettes/chaos/gave-up.json")
    with opened_report(tmp_path, failed) as (page, _):
        assert page.inner_text("[data-testid=chart-cost]") == "Every call cost $0.00: nothing was billed (3 failed)."
        assert page.inner_text("[data-testid=chart-tokens]") == "No call reported any tokens (3 calls, 3 failed)."
        assert page.locator("svg[data-testid^=chart]").count() == 0


def test_call_graph_labels_end_at_a_word_and_no_node_is_empty(tmp_path: Path) -> None:
    long_words = "Summarise the quarterly report and list every risk the auditors flagged last year " * 3
    body = {
        "model": "claude-haiku-4-5",
        "max_tokens": 256,
        "messages": [
            {"role": "user", "content": long_words},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": ""}]},
        ],
    }
    answer = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "Done."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 50, "output_tokens": 5},
        "model": "claude-haiku-4-5",
    }
    path = recorded(tmp_path / "graph.json", [exchange(request(body), response(orjson.dumps(answer)))])
    report = report_of(path)
    assert report.callGraph is not None
    with opened_report(tmp_path, report) as (page, _):
        nodes = page.locator("[data-testid=call-graph] g.node")
        assert nodes.count() == len(report.callGraph.nodes) == 4
        for i in range(nodes.count()):
            node = nodes.nth(i)
            shown = node.locator("text").text_content() or ""
            full = f"{node.get_attribute('data-kind')}: {node.locator('title').text_content()}"
            _, _, said = shown.partition(": ")
            assert said.strip(), f"node {i} is empty"
            if shown.endswith("…"):
                cut = shown[:-1]
                assert full.startswith(cut)
                assert full[len(cut)] in " ,;:.-", f"cut inside a word: {shown!r}"
            else:
                assert shown == full
