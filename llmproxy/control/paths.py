"""Where on the control port each part is served: named apart from the API's models, so that the port can
listen (and a client can address it) without importing the models it only needs once a request comes."""

from typing import Final

API_BASE: Final = "/llmproxy/api/v1"  # the REST API (`llmproxy.control.api`)
MCP_PATH: Final = "/llmproxy/mcp"  # the same API as an MCP server over Streamable HTTP
