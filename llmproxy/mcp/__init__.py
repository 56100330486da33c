"""The Model Context Protocol as llmproxy speaks it, whoever speaks it: JSON-RPC messages read and written
(`jsonrpc.py`) and the protocol's revisions and headers (`protocol.py`). The mock's MCP servers
(`llmproxy.mock.mcp`) are built on it; nothing here knows what answers."""
