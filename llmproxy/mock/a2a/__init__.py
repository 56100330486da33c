"""Mock A2A agents: the expectations file's `a2aAgents`, served over JSON-RPC by the mock (docs/a2a.md)."""
