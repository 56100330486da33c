"""`llmproxy mcp-check --json`."""

from typing import Literal

from pydantic import Field

from llmproxy.mcp.check import Checked
from llmproxy.outputs import Document, Part


class Check(Part):
    name: str = Field(description="what was checked: initialize, ping, tools/call NAME…")
    outcome: Literal["pass", "fail", "skip"]
    detail: str = Field(description="what the server did, or why the check was skipped")


class McpCheck(Document):
    command: Literal["mcp-check"] = "mcp-check"
    target: str = Field(description="the server's URL, or the command that runs it over stdio")
    transport: Literal["http", "stdio"]
    passed: bool = Field(description="no check failed (exit status 0)")
    checks: list[Check]


def document(target: str, transport: Literal["http", "stdio"], checked: list[Checked]) -> McpCheck:
    checks = [Check(name=each.name, outcome=each.outcome.value, detail=each.detail) for each in checked]
    return McpCheck(target=target, transport=transport, passed=all(c.outcome != "fail" for c in checks), checks=checks)


def table(report: McpCheck) -> str:
    """The checks as a text table, and a last line of counts."""
    width = max(len(check.name) for check in report.checks)
    lines = [f"{check.outcome.upper():4}  {check.name:{width}}  {check.detail}" for check in report.checks]
    counts = {outcome: sum(c.outcome == outcome for c in report.checks) for outcome in ("pass", "fail", "skip")}
    lines.append(f"{report.target}: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    return "\n".join(lines)
