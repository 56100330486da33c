"""Mock MCP servers: the `mcpServers` of an expectations file (`spec.py`), what one server answers to each
JSON-RPC message (`server.py`, with `tools.py` picking a tool's result), served over Streamable HTTP through
the mock's stage (`http.py`) and over stdio (`stdio.py`, `llmproxy mcp-serve`)."""
