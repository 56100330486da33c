"""Which requests are an agent's traffic to a tool server (MCP over Streamable HTTP) or to another agent (A2A),
told by their shape whatever host they go to: recording keeps them with no `--record-host`, replay answers a
miss of theirs in JSON-RPC, the report counts their calls.

MCP: a JSON-RPC POST of one of MCP's methods ("Schema reference",
https://modelcontextprotocol.io/specification/2025-11-25/schema), or any request carrying a Streamable HTTP
header (`Mcp-Session-Id`, `MCP-Protocol-Version`) — a session's notifications and answers, its GET stream, its
DELETE. A2A: a JSON-RPC POST of one of A2A's methods, in either dialect (0.3's `message/send`, 1.0's
`SendMessage`), or a GET of an agent card at its well-known path. MCP's headers are read first: both protocols
have a `tasks/get`. llmproxy's own control plane (its MCP server at `/llmproxy/mcp`) is never one of them: a
run's cassette does not keep the agent driving llmproxy, nor replay answer it.
"""

import re
from collections.abc import Mapping
from typing import Any, Final, Literal

type ToolProtocol = Literal["mcp", "a2a"]

MCP_METHODS: Final = frozenset(
    {
        "initialize",
        "ping",
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "tasks/list",
        "tasks/result",
    }
)
A2A_METHODS: Final = frozenset(
    {
        # 1.0
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
        # 0.3
        "message/send",
        "message/stream",
        "tasks/get",
        "tasks/cancel",
        "tasks/resubscribe",
        "tasks/pushNotificationConfig/set",
        "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list",
        "tasks/pushNotificationConfig/delete",
        "agent/getAuthenticatedExtendedCard",
    }
)
AGENT_CARD: Final = re.compile(r"/\.well-known/agent(-card)?\.json$")
SESSION_HEADER: Final = "mcp-session-id"
VERSION_HEADER: Final = "mcp-protocol-version"
_MCP_HEADERS: Final = (SESSION_HEADER, VERSION_HEADER)
_LLMPROXY_OWN: Final = "/llmproxy/"  # the control port's paths
NOT_RECORDED: Final = -32001  # the JSON-RPC error (of the implementation-defined range) a replay miss gets


def mcp_method(method: str) -> bool:
    return method in MCP_METHODS or method.startswith("notifications/")


def awaits_no_answer(method: str, headers: Mapping[str, str], body: Any) -> bool:
    """Whether an MCP request over Streamable HTTP is one nothing in the client waits on: its GET, which opens
    a stream for the server's own requests and notifications (a server may refuse it: 405), or a POST of
    notifications and of its answers to the server's requests (202). A replay that lacks one answers it so
    (the server's side of that stream was never the client's to replay), and does not count it unused."""
    if not any(name in headers for name in _MCP_HEADERS):
        return False
    if method == "GET":
        return True
    if method != "POST":
        return False
    messages = body if isinstance(body, list) else [body]
    return bool(messages) and all(
        isinstance(message, dict) and ("method" not in message or message.get("id") is None) for message in messages
    )


def protocol(method: str, path: str, headers: Mapping[str, str], body: Any) -> ToolProtocol | None:
    """The protocol a request speaks, from its HTTP method, path (without the query), headers (by lower-case
    name) and body parsed as JSON (None when it is not JSON); None for anything else."""
    if path.startswith(_LLMPROXY_OWN):
        return None
    if any(name in headers for name in _MCP_HEADERS):
        return "mcp"
    if method == "GET":
        return "a2a" if AGENT_CARD.search(path) else None
    if method != "POST":
        return None
    for message in body if isinstance(body, list) else [body]:  # a batch speaks as its messages do
        if isinstance(message, dict) and message.get("jsonrpc") == "2.0" and isinstance(message.get("method"), str):
            if mcp_method(message["method"]):
                return "mcp"
            if message["method"] in A2A_METHODS:
                return "a2a"
    return None
