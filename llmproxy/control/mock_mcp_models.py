"""The JSON of the mock MCP servers' endpoint (`llmproxy.control.mock_mcp_api`): each server the mock serves,
where, and what it offers — its tools, resources, resource templates and prompts as an MCP client's list
methods get them (the file's answers left out), and what its tools have been asked."""

from typing import Any, Literal

from pydantic import Field

from llmproxy.control.models import ApiModel


class _Listed(ApiModel):
    """What an MCP `…/list` method gives of an item, beside its name."""

    name: str
    title: str | None = None
    description: str | None = None


class MockMcpTool(_Listed):
    input_schema: dict[str, Any] = Field(description="the JSON Schema a call's arguments are checked against")
    output_schema: dict[str, Any] | None = Field(None, description="the JSON Schema its structuredContent meets")
    annotations: dict[str, Any] | None = None
    calls: int = Field(description="tools/call requests naming it so far, whatever they got")
    served: list[int] = Field(description="calls each of its results (in the file's order) answered so far")


class MockMcpResource(_Listed):
    uri: str
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None


class MockMcpResourceTemplate(_Listed):
    uri_template: str
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None


class MockMcpPromptArgument(_Listed):
    required: bool = False


class MockMcpPrompt(_Listed):
    arguments: list[MockMcpPromptArgument] = Field(default_factory=list)


class MockMcpServer(ApiModel):
    name: str = Field(description="its name in the expectations file (`llmproxy mcp-serve --server NAME`)")
    title: str | None = None
    version: str
    path: str = Field(description="where it is served on the mock's base URL")
    mock_url: str | None = Field(None, description="its URL on the mock's base URL, when the run has one")
    url: str | None = Field(None, description="the real server's URL it answers for through the proxy")
    response: Literal["json", "sse"] = Field(description="how it answers over Streamable HTTP")
    open_sessions: int | None = Field(None, description="sessions begun and not ended; absent when it keeps none")
    tools: list[MockMcpTool]
    resources: list[MockMcpResource]
    resource_templates: list[MockMcpResourceTemplate]
    prompts: list[MockMcpPrompt]


class MockMcpServers(ApiModel):
    servers: list[MockMcpServer] = Field(description="in the order they were added; a server replaced keeps its place")
