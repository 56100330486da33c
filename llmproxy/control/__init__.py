"""The control plane: drive a running llmproxy over REST (`/llmproxy/api/v1/` on its control port) — its
status, the journal of what it saw, its chaos. docs/control.md is the manual.

One concept per module: `auth` (who may call, and what), `router` (paths, methods, bodies and their errors,
the OpenAPI document), `models` (the JSON the API speaks), `api` (the endpoints over a running session),
`server` (the loopback HTTP listener that serves them beside the chaos endpoint), `client` (a typed client of
the API, for Python code), `mcp` (the same endpoints as an MCP server's tools, over stdio and HTTP).
"""
