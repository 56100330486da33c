"""`llmproxy explain --json` (`--format json`): the richest conversation of a recorded run as a call graph."""

from typing import Literal

from pydantic import Field

from llmproxy.analysis.explain import Explanation
from llmproxy.analysis.report import McpToolRow
from llmproxy.outputs import Document


class Explained(Document):
    command: Literal["explain"] = "explain"
    calls: int = Field(description="the chat calls selected")
    gaps: list[str] = Field(
        description="what the calls are not: the older calls --max-calls left out, exchanges that could not be"
        " decoded (empty when they are every call)"
    )
    explanation: Explanation | None = Field(
        description="the conversation of the request with the most history: its messages, tool calls and call"
        " graph; null when there is no chat call to explain (exit status 1)"
    )
    mcpTools: list[McpToolRow] = Field(
        default_factory=list, description="the MCP tool calls beside the chat calls, per server and tool"
    )
