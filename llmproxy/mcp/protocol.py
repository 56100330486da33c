"""The MCP revisions llmproxy speaks and what tells them apart: the version a server agrees to in `initialize`
(the client's own when the server speaks it, else the newest the server speaks — "Lifecycle",
https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#version-negotiation), and the
Streamable HTTP headers ("Transports", …/basic/transports#streamable-http)."""

from typing import Final

from llmproxy.tool_protocols import SESSION_HEADER as SESSION_HEADER
from llmproxy.tool_protocols import VERSION_HEADER as VERSION_HEADER

VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # oldest first
LATEST: Final = VERSIONS[-1]
ASSUMED: Final = "2025-03-26"  # what a request without MCP-Protocol-Version speaks (2025-06-18 transports)


LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def negotiated(requested: str) -> str:
    """The version a server answers `initialize` with."""
    return requested if requested in VERSIONS else LATEST


def at_least(version: str, minimum: str) -> bool:
    """Whether `version` (one of VERSIONS) is `minimum` or newer."""
    return VERSIONS.index(version) >= VERSIONS.index(minimum)


def batches(version: str) -> bool:
    """Whether JSON-RPC batches (arrays of messages) may be sent: 2025-03-26 had them, 2025-06-18 took them out."""
    return version in ("2024-11-05", "2025-03-26")


def tool_input_errors_are_results(version: str) -> bool:
    """Arguments that fail a tool's inputSchema: a tool execution error (`isError`) from 2025-11-25 on, so that
    the model sees it and can correct itself (SEP-1303); before, a JSON-RPC invalid-params error."""
    return at_least(version, "2025-11-25")


def logged(level: str, threshold: str | None) -> bool:
    """Whether a log message at `level` goes to a client that asked for `threshold` and above (None: all)."""
    return threshold is None or LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)
