"""The MCP tool calls a recorded run made beside its model calls, per server and tool: how often each tool was
called, how often it failed, how long it took, and how many bytes of results it handed back for the agent to
feed its model. Read from the same exchanges as the chat calls — an HTTP server's (recorded by its shape) and a
stdio server's (`llmproxy mcp-tap`) alike.

A server is named by what it said of itself in `initialize` (`serverInfo.name`), else by its address: the
tap's name for a stdio server, host and path for an HTTP one. A call failed when it got no answer, an HTTP
error, a JSON-RPC error, or a tool error (`isError`). Its result's bytes are its `result` as JSON: the content
blocks (and structured content) an agent passes on to its model.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import orjson

from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.report import McpToolRow
from llmproxy.analysis.signals import OVERSIZED_RESULT_TOKENS, SignalFinding
from llmproxy.cassette.bodies import event_bytes
from llmproxy.cassette.model import Exchange, JsonBody, JsonLineEvent, SseEvent
from llmproxy.cassette.tool_servers import protocol_of
from llmproxy.words import plural


@dataclass(slots=True)
class ToolTally:
    """One (server, tool)'s calls."""

    server: str
    tool: str
    calls: int = 0
    errors: int = 0
    latency_ms: float = 0.0
    result_bytes: int = 0
    largest_result_bytes: int = 0


@dataclass(slots=True)
class ToolServerCalls:
    """Every MCP tool call of the exchanges added, tallied by server and tool."""

    tallies: dict[tuple[str, str], ToolTally] = field(default_factory=dict)
    _names: dict[str, str] = field(default_factory=dict)  # a server's URL → the name it gave itself
    _pending: list[tuple[str, str, bool, float, int]] = field(default_factory=list)

    def add(self, exchange: Exchange) -> None:
        """Note an exchange of a cassette being read: tallied at `settle`, once its servers' names are known."""
        if protocol_of(exchange) != "mcp":
            return
        request = exchange.request.body.json_ if isinstance(exchange.request.body, JsonBody) else None
        if not isinstance(request, dict):
            return
        url = exchange.request.url.partition("?")[0]
        answer = _answer(exchange)
        if request.get("method") == "initialize":
            info = answer.get("result", {}).get("serverInfo") if isinstance(answer.get("result"), dict) else None
            if isinstance(info, dict) and isinstance(info.get("name"), str) and info["name"]:
                self._names[url] = info["name"]
            return
        params = request.get("params")
        if request.get("method") != "tools/call" or not isinstance(params, dict) or "id" not in request:
            return
        name = params.get("name")
        tool = name if isinstance(name, str) else "?"
        result = answer.get("result")
        response = exchange.response
        failed = (
            response is None
            or response.status >= 400
            or "error" in answer
            or not isinstance(result, dict)
            or result.get("isError") is True
        )
        size = len(orjson.dumps(result)) if isinstance(result, dict) else 0
        self._pending.append((url, tool, failed, exchange.timings.total_ms or 0.0, size))

    def settle(self) -> None:
        """Tally the calls added so far under their servers' names (known once `initialize` was read)."""
        for url, tool, failed, latency, size in self._pending:
            server = self._names.get(url) or _address(url)
            tally = self.tallies.setdefault((server, tool), ToolTally(server, tool))
            tally.calls += 1
            tally.errors += failed
            tally.latency_ms += latency
            tally.result_bytes += size
            tally.largest_result_bytes = max(tally.largest_result_bytes, size)
        self._pending.clear()

    def ordered(self) -> list[ToolTally]:
        return [self.tallies[key] for key in sorted(self.tallies)]


def tool_row(tally: ToolTally) -> McpToolRow:
    """A tool's tally as the report and `explain --json` give it."""
    return McpToolRow(
        server=tally.server,
        tool=tally.tool,
        calls=tally.calls,
        errors=tally.errors,
        totalLatencyMs=round(tally.latency_ms, 3),
        meanLatencyMs=round(tally.latency_ms / tally.calls, 3) if tally.calls else 0.0,
        resultBytes=tally.result_bytes,
        largestResultBytes=tally.largest_result_bytes,
    )


def timeline_lines(tallies: Sequence[ToolTally]) -> list[str]:
    """The MCP tool calls in words, for `explain`'s timeline."""
    if not tallies:
        return []
    lines = ["", f"MCP tool calls ({plural(sum(tally.calls for tally in tallies), 'call')}):"]
    for tally in tallies:
        failed = f", {plural(tally.errors, 'error')}" if tally.errors else ""
        lines.append(
            f"  {tally.server} · {tally.tool}: {plural(tally.calls, 'call')}{failed},"
            f" {tally.latency_ms / tally.calls:,.0f} ms each, {tally.result_bytes:,} bytes of results"
        )
    return lines


def origin(tool_name: str, tallies: Sequence[ToolTally]) -> ToolTally | None:
    """The MCP tool a model's tool of this name calls, when one of the run's MCP tools is it: named as Claude
    Code names them (`mcp__SERVER__TOOL`), or as the server names it (one server's only: two servers with a
    tool of that name leave it unknown)."""
    for tally in tallies:
        if tool_name == f"mcp__{tally.server}__{tally.tool}":
            return tally
    same = [tally for tally in tallies if tally.tool == tool_name]
    return same[0] if len(same) == 1 else None


def oversized_origins(
    finding: SignalFinding, calls: Sequence[RecordedCall], tallies: Sequence[ToolTally]
) -> SignalFinding:
    """OVERSIZED_TOOL_RESULT naming the MCP servers and tools its oversized results came from, when they came
    from the run's MCP calls; any other finding as it is."""
    if finding.id != "OVERSIZED_TOOL_RESULT" or not tallies:
        return finding
    names = {
        block.name
        for index in finding.affected
        for block in calls[index - 1].tool_results
        if block.name is not None and block.tokens >= OVERSIZED_RESULT_TOKENS
    }
    found = sorted({(tally.server, tally.tool): tally for name in names if (tally := origin(name, tallies))}.items())
    if not found:
        return finding
    said = "; ".join(
        f"tool {tally.tool} of MCP server {tally.server} (its largest result {tally.largest_result_bytes:,} bytes)"
        for _, tally in found
    )
    return replace(finding, detail=f"{finding.detail} They came from {said}.", mcp_tools=tuple(key for key, _ in found))


def _answer(exchange: Exchange) -> dict[str, Any]:
    """The JSON-RPC answer of an exchange: its JSON body, or the last message of its stream that answers."""
    response = exchange.response
    if response is None:
        return {}
    if isinstance(response.body, JsonBody):
        return response.body.json_ if isinstance(response.body.json_, dict) else {}
    for event in reversed(response.events or []):
        message: Any = None
        if isinstance(event, SseEvent):
            message = event.data
        elif isinstance(event, JsonLineEvent):
            message = event.json_
        else:
            try:
                message = orjson.loads(event_bytes(event))
            except orjson.JSONDecodeError:
                continue
        if isinstance(message, dict) and ("result" in message or "error" in message):
            return message
    return {}


def _address(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme == "stdio":
        return parts.hostname or url
    return f"{parts.netloc}{parts.path}"
