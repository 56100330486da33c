"""Renderers: the report model in each output format, each a pure function `Report → str`, one module per
format (`render/<format>.py` defines `render_<format>`)."""

from collections.abc import Callable
from importlib import import_module

from llmproxy.analysis.report import Report


def render(report: Report, fmt: str) -> str:
    """The report in `fmt`: terminal (plain text), markdown, json, csv or html (the command line's choices).
    Only that format's module is imported: the terminal's (rich) and the HTML page's cost a tenth of a second
    a JSON report need not pay."""
    renderer: Callable[[Report], str] = getattr(import_module(f"{__name__}.{fmt}"), f"render_{fmt}")
    return renderer(report)
