"""Claude Code's session logs: `<config>/projects/<project>/<session>.jsonl`, subagents beside them in
`<session>/subagents/agent-*.jsonl`.

Each answer is an `assistant` line holding the API's message (`message.id`, `model`, `usage`); Claude Code
writes one line per content block, each repeating the message's id and usage, so the lines of one message
are folded into one entry (its text and tool calls joined, the last line's usage, which is the final count).
The request is named by `requestId` (by `requestRef`, the logged request's id, in versions that log the
request instead of the API's request id). A resumed or copied session repeats earlier answers with both ids.
"""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from llmproxy.agent_logs.entries import Api, LogEntry, LoggedTool, Skips, count, json_lines, timestamp
from llmproxy.model import Provider, Usage

API: Api = (Provider.ANTHROPIC, "https://api.anthropic.com/v1/messages")
_WANTED = (b'"assistant"',)
_SYNTHETIC = "<synthetic>"  # the model Claude Code names for answers it made up itself (no API call)


def is_claude_log(first: dict[str, Any]) -> bool:
    """Whether a JSONL file's first entry is Claude Code's (every line carries the session id)."""
    return "sessionId" in first and "projectHash" not in first and first.get("type") != "session_meta"


def claude_entries(path: Path, skips: Skips) -> list[LogEntry]:
    undated = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    found: dict[tuple[str, ...], LogEntry] = {}
    usages: dict[tuple[str, ...], dict[str, Any]] = {}  # each answer's last usage, read once all lines are
    stem = path.stem  # the session of lines that name none
    for number, line in json_lines(path, skips, _WANTED):
        message = line.get("message")
        if line.get("type") != "assistant" or not isinstance(message, dict):
            continue
        usage = message.get("usage")
        model = message.get("model")
        if model == _SYNTHETIC:
            skips.add("no API call", number)
            continue
        if not isinstance(usage, dict):
            continue
        message_id = message.get("id")
        request = line.get("requestId") or line.get("requestRef")
        session = str(line.get("sessionId", stem))
        if not isinstance(message_id, str):
            skips.add("no message id", number)
            continue
        key = (message_id, str(request)) if request else (session, message_id)
        entry = found.get(key)
        if entry is None:
            started = timestamp(line.get("timestamp"), undated)
            entry = found[key] = LogEntry.found("claude", path, number, session, key, started, model, API)
            entry.response_id = message_id
            entry.sidechain = line.get("isSidechain") is True
        usages[key] = usage
        entry.stop_reason = message.get("stop_reason") or entry.stop_reason
        for block in message.get("content") or ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                entry.text += str(block.get("text", ""))
            elif block.get("type") == "tool_use":
                entry.tool_calls.append(
                    LoggedTool(str(block.get("id", "")), str(block.get("name", "")), block.get("input"))
                )
    for answer, entry in found.items():
        entry.usage = _usage(usages[answer])
    return list(found.values())


def _usage(usage: dict[str, Any]) -> Usage:
    """Anthropic's counts: `input_tokens` leaves out the cache's reads and writes, which llmproxy counts in."""
    read = count(usage.get("cache_read_input_tokens"))
    write = count(usage.get("cache_creation_input_tokens"))
    tiers = usage.get("cache_creation")
    hour = count(tiers.get("ephemeral_1h_input_tokens")) if isinstance(tiers, dict) else 0
    details = usage.get("output_tokens_details")
    thinking = count(details.get("thinking_tokens")) if isinstance(details, dict) else 0
    return Usage(
        input_tokens=count(usage.get("input_tokens")) + read + write,
        output_tokens=count(usage.get("output_tokens")),
        cache_read_tokens=read,
        cache_write_tokens=write,
        cache_write_1h_tokens=hour,
        reasoning_tokens=thinking,
    )
