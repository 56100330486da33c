"""The Gemini CLI's chat logs: `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl` (0.4x and later;
earlier versions wrote the same records as one JSON object, `session-….json`, holding `messages`). The
folder moves with GEMINI_CLI_HOME, which stands for the home that holds `.gemini`.

The JSONL file starts with the session's header (`sessionId`, `projectHash`); each message is a record with
an `id`, written again whenever it changes (a tool call's result arrives): the last one of an id is the
message. The model's answers are the `gemini` records, with their `tokens`.
"""

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from llmproxy.agent_logs.entries import Api, LogEntry, LoggedTool, Skips, count, json_lines, timestamp
from llmproxy.errors import LlmproxyError
from llmproxy.model import Provider, Usage

API: Api = (Provider.GEMINI, "https://generativelanguage.googleapis.com/v1beta/models")


def is_gemini_log(first: dict[str, Any]) -> bool:
    return "sessionId" in first and "projectHash" in first


def gemini_entries(path: Path, skips: Skips) -> list[LogEntry]:
    undated = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    session = path.stem
    latest: dict[str, tuple[int, dict[str, Any]]] = {}  # message id → (its first line, its last record)
    for number, record in _records(path, skips):
        if "projectHash" in record and "sessionId" in record:
            session = str(record["sessionId"])
            for message in record.get("messages") or ():  # the whole-file format: every message at once
                _keep(latest, number, message)
        else:
            _keep(latest, number, record)
    entries = []
    for key, (number, message) in latest.items():
        tokens = message.get("tokens")
        if message.get("type") != "gemini" or not isinstance(tokens, dict):
            continue
        model = message.get("model")
        calls = [
            LoggedTool(str(call.get("id", "")), str(call.get("name", "")), call.get("args"))
            for call in message.get("toolCalls") or ()
            if isinstance(call, dict)
        ]
        content = message.get("content")
        started = timestamp(message.get("timestamp"), undated)
        entry = LogEntry.found("gemini", path, number, session, ("gemini", session, key), started, model, API)
        entry.usage, entry.tool_calls, entry.stop_reason = _usage(tokens), calls, "tool_use" if calls else "end_turn"
        entry.text = content if isinstance(content, str) else ""
        entries.append(entry)
    return entries


def _records(path: Path, skips: Skips) -> Iterable[tuple[int, dict[str, Any]]]:
    if path.suffix == ".jsonl":
        return json_lines(path, skips)
    try:
        whole = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise LlmproxyError(f"{path}: not a Gemini CLI chat log: {exc}") from None
    return [(1, whole)] if isinstance(whole, dict) else []


def _keep(latest: dict[str, tuple[int, dict[str, Any]]], number: int, record: object) -> None:
    if isinstance(record, dict) and isinstance(record.get("id"), str):
        first = latest[record["id"]][0] if record["id"] in latest else number
        latest[record["id"]] = (first, record)


def _usage(tokens: dict[str, Any]) -> Usage:
    """Gemini's counts: the prompt holds the cached part; thoughts and tool-use prompts are apart, added in."""
    thoughts = count(tokens.get("thoughts"))
    return Usage(
        input_tokens=count(tokens.get("input")) + count(tokens.get("tool")),
        output_tokens=count(tokens.get("output")) + thoughts,
        cache_read_tokens=count(tokens.get("cached")),
        reasoning_tokens=thoughts,
    )
