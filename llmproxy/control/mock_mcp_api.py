"""The control API's view of the mock MCP servers (the expectations file's `mcpServers`, docs/mcp.md): each
server, where it is served, what an MCP client listing it gets, and the calls its tools have had — MockServer's
`list_mock_tools`. Servers are added and replaced with the expectations (`POST /expectations`, `POST /load`).
"""

from typing import Any

from llmproxy.control.auth import Access
from llmproxy.control.mock_mcp_models import MockMcpServer, MockMcpServers, MockMcpTool
from llmproxy.control.router import Call, Endpoint
from llmproxy.mock.mcp.http import ServerStanding
from llmproxy.proxy_session import Session


def mock_mcp_endpoints(session: Session) -> list[Endpoint]:
    """The mock MCP servers' endpoint over `session`, which must be running when it is called."""

    def mcp_servers(call: Call[Any, Any, Any]) -> MockMcpServers:
        mock = session.mock
        engine = mock.state.value[0] if mock is not None else None  # read: no empty engine put in place
        standing = engine.mcp_standing() if engine is not None else []
        return MockMcpServers(servers=[_server(server, session.base_url) for server in standing])

    return [
        Endpoint(
            "GET",
            "/mcp-servers",
            "The mock MCP servers: where each is served, its tools (with the calls they have had), resources and "
            "prompts",
            mcp_servers,
            MockMcpServers,
            Access.READ,
        ),
    ]


def _server(standing: ServerStanding, base_url: str) -> MockMcpServer:
    definition = standing.definition
    listed = standing.listed
    return MockMcpServer.model_validate(
        {
            "name": definition.name,
            "title": definition.title,
            "version": definition.version,
            "path": definition.served_path,
            "mockUrl": base_url + definition.served_path if base_url else None,
            "url": definition.url,
            "response": definition.response,
            "openSessions": standing.sessions,
            "tools": [
                MockMcpTool.model_validate({**tool.listed, "calls": tool.calls, "served": list(tool.served)})
                for tool in standing.tools
            ],
            "resources": listed["resources/list"]["resources"],
            "resourceTemplates": listed["resources/templates/list"]["resourceTemplates"],
            "prompts": listed["prompts/list"]["prompts"],
        }
    )
