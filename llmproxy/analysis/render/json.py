"""The report as JSON (schema v1, docs/report.schema.json): indented, fields in the schema's order."""

import orjson

from llmproxy.analysis.report import Report


def render_json(report: Report) -> str:
    return orjson.dumps(report.model_dump(mode="json"), option=orjson.OPT_INDENT_2).decode() + "\n"
