"""Renderers: the report model in each output format, each a pure function `Report → str`."""

from llmproxy.analysis.report import Report


def render(report: Report, fmt: str) -> str:
    """The report in `fmt`: terminal (plain text), markdown, json, csv or html."""
    from llmproxy.analysis.render.csv import render_csv
    from llmproxy.analysis.render.html import render_html
    from llmproxy.analysis.render.json import render_json
    from llmproxy.analysis.render.markdown import render_markdown
    from llmproxy.analysis.render.terminal import render_terminal

    renderers = {
        "terminal": render_terminal,
        "markdown": render_markdown,
        "json": render_json,
        "csv": render_csv,
        "html": render_html,
    }
    return renderers[fmt](report)
