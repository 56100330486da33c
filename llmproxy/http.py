"""Facts of HTTP itself that several parts need, kept once."""

from typing import Final

# "stdio": a stdio MCP server's exchanges (llmproxy.mcp.stdio_exchange) have a URL but no port
DEFAULT_PORTS: Final = {"http": 80, "https": 443, "ws": 80, "wss": 443, "stdio": 0}

HOP_BY_HOP: Final = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "te", "trailer", "upgrade"}
)
"""Headers about one connection's framing, not the message: a recorded answer is sent again without them (the
door frames the body its own way, and the stored body is already decoded)."""


def default_port(scheme: str) -> int | None:
    return DEFAULT_PORTS.get(scheme.lower())


def authority(scheme: str, host: str, port: int | None) -> str:
    """`host[:port]` as a URL writes it: IPv6 in brackets, the scheme's default port left out."""
    name = f"[{host}]" if ":" in host else host
    return name if port is None or port == default_port(scheme) else f"{name}:{port}"
