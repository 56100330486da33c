"""The control plane as an MCP server: `tools` (the REST API's endpoints as MCP tools, pure), `server` (the
official SDK's server of them), `http` (Streamable HTTP at `/llmproxy/mcp` on the control port), `stdio`
(`llmproxy mcp`). docs/control.md#mcp is the manual."""
