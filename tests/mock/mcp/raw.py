"""MCP over Streamable HTTP by hand, for what an SDK client would never send or hides: plain POSTs (and other
methods) to a mock MCP server, the status, headers and JSON body (or server-sent events) as they come."""

import json
import urllib.error
import urllib.request
from typing import Any

DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
ACCEPT = "application/json, text/event-stream"
INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "a test", "version": "1"}}


def post(
    url: str, message: Any, headers: dict[str, str] | None = None, body: bytes | None = None, method: str = "POST"
) -> tuple[int, dict[str, str], Any]:
    """The answer to one request, whatever its status: the status, headers by lower-case name, and the body as
    JSON (a list of messages for an event stream; None when there is no body)."""
    data = body if body is not None else json.dumps(message).encode() if message is not None else None
    sent = {"content-type": "application/json", "accept": ACCEPT, **(headers or {})}
    request = urllib.request.Request(url, data=data, headers=sent, method=method)
    try:
        answer = DIRECT.open(request, timeout=30)
    except urllib.error.HTTPError as error:
        answer = error
    with answer:
        raw = answer.read()
        got = {name.lower(): value for name, value in answer.headers.items()}
        return answer.status, got, read(got.get("content-type", ""), raw)


def read(media: str, raw: bytes) -> Any:
    if not raw:
        return None
    if media.startswith("text/event-stream"):
        return [json.loads(line.removeprefix(b"data: ")) for line in raw.splitlines() if line.startswith(b"data: ")]
    return json.loads(raw)


def opened(url: str, version: str = "2025-06-18") -> dict[str, str]:
    """A session initialized (and its initialized notification sent): the headers later requests carry."""
    params = {**INITIALIZE, "protocolVersion": version}
    _, headers, body = post(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    assert body["result"]["protocolVersion"] == version
    session = {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": version}
    status, _, _ = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert status == 202
    return session
