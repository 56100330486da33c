"""The report as JSON (schema v1, docs/json/report.schema.json): indented, fields in the schema's order."""

import orjson

from llmproxy.analysis.report import Report


def render_json(report: Report) -> str:
    """pydantic writes the report's sections; orjson writes the per-call rows itself: they are plain
    dataclasses of JSON values of their declared types (`build._row`), which it writes field by field in
    their order, as pydantic would, without first copying each of 10,000 rows into a dict."""
    sections = report.model_dump(mode="json", exclude={"calls"})
    document = {name: report.calls if name == "calls" else sections[name] for name in _ORDER}
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"


_ORDER = tuple(Report.model_fields)
