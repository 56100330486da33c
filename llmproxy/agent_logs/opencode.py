"""opencode's sessions: a SQLite database, `$XDG_DATA_HOME/opencode/opencode.db` (`~/.local/share/opencode`;
1.x), whose `message` table holds each message as JSON; earlier versions kept one JSON file a message,
`storage/message/<session>/msg_*.json`, with the same fields.

An assistant message names its provider and model (`providerID`, `modelID`), its `tokens` (input without the
cache, output, reasoning, cache read and write) and the `cost` opencode worked out itself. Its parts (the
`part` table) are its steps: each `step-finish` part closes one call of the model, with that call's tokens and
cost, after the `text` and `tool` parts it answered with; a message of several steps is several calls. A
message whose parts are not kept counts as one call. A subagent runs in a session of its own (its
`parent_id` names the session that started it): its messages are counted there.
"""

import contextlib
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from llmproxy.agent_logs.entries import Api, LogEntry, LoggedTool, Skips, count, json_object, timestamp
from llmproxy.errors import LlmproxyError
from llmproxy.model import Provider, Usage

_APIS: dict[str, Api] = {  # where each provider opencode names sends its calls (the price book finds the vendor by it)
    "anthropic": (Provider.ANTHROPIC, "https://api.anthropic.com/v1/messages"),
    "openai": (Provider.OPENAI, "https://api.openai.com/v1/responses"),
    "google": (Provider.GEMINI, "https://generativelanguage.googleapis.com/v1beta/models"),
}


def is_opencode_message(path: Path) -> bool:
    """Whether a JSON file is one of opencode's message files (the format before its database)."""
    return path.name.startswith("msg_") and path.parent.parent.name == "message"


def opencode_entries(path: Path, skips: Skips) -> list[LogEntry]:
    if path.suffix == ".json":
        try:
            data = path.read_bytes()
        except OSError:
            skips.add("not JSON", 1)
            return []
        message = json_object(data, skips, 1)
        entry = _entry(path, 1, message, path.parent.name, path.stem) if message is not None else None
        return [entry] if entry is not None else []
    try:
        # read-only: opencode may be running; nothing of its database is changed
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as database:
            steps = _steps(database, skips)
            rows = database.execute("SELECT rowid, id, session_id, data FROM message ORDER BY time_created, rowid")
            entries = []
            for rowid, message_id, session, data in rows:
                message = json_object(data, skips, rowid)
                if message is not None and (entry := _entry(path, rowid, message, session, message_id)):
                    entries += _per_step(entry, steps.get(message_id, []))
            return entries
    except sqlite3.Error as exc:
        raise LlmproxyError(f"{path}: not an opencode database: {exc}") from None


def _steps(database: sqlite3.Connection, skips: Skips) -> dict[str, list[dict[str, Any]]]:
    """Each message's parts, in order (none where the database keeps no parts)."""
    found: dict[str, list[dict[str, Any]]] = {}
    try:
        rows = database.execute("SELECT rowid, message_id, data FROM part ORDER BY time_created, rowid").fetchall()
    except sqlite3.OperationalError:  # no part table
        return found
    for rowid, message_id, data in rows:
        if (part := json_object(data, skips, rowid, "not JSON (part)")) is not None:
            found.setdefault(message_id, []).append(part)
    return found


def _per_step(entry: LogEntry, parts: list[dict[str, Any]]) -> list[LogEntry]:
    """The message's calls: one a `step-finish` part, with the text and tool calls before it; the message
    itself when its parts say no steps."""
    calls: list[LogEntry] = []
    text: list[str] = []
    tools: list[LoggedTool] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text":
            text.append(str(part.get("text", "")))
        elif kind == "tool":
            state = part.get("state")
            arguments = state.get("input") if isinstance(state, dict) else None
            tools.append(LoggedTool(str(part.get("callID", "")), str(part.get("tool", "")), arguments))
        elif kind == "step-finish" and isinstance(part.get("tokens"), dict):
            step = replace(entry, key=(*entry.key, str(len(calls))), usage=_usage(part["tokens"]))
            step.text, step.tool_calls = "".join(text), list(tools)
            step.stop_reason = _STOPS.get(str(part.get("reason")))
            step.logged_cost = _cost(part.get("cost"))
            calls.append(step)
            text.clear()
            tools.clear()
    return calls or [entry]


def _entry(path: Path, row: int, message: dict[str, Any], session: str, message_id: str) -> LogEntry | None:
    tokens = message.get("tokens")
    if message.get("role") != "assistant" or not isinstance(tokens, dict):
        return None
    created = message.get("time", {}).get("created") if isinstance(message.get("time"), dict) else None
    started = timestamp(created, datetime.fromtimestamp(path.stat().st_mtime, UTC))
    api = _APIS.get(str(message.get("providerID")), _APIS["openai"])
    key = ("opencode", str(message.get("id") or message_id))
    session = str(message.get("sessionID") or session)
    entry = LogEntry.found("opencode", path, row, session, key, started, message.get("modelID"), api)
    entry.usage, entry.logged_cost = _usage(tokens), _cost(message.get("cost"))
    entry.stop_reason = _STOPS.get(str(message.get("finish")))
    return entry


_STOPS = {"tool-calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}


def _usage(tokens: dict[str, Any]) -> Usage:
    """opencode's counts: the input leaves out the cache's reads and writes, the output the reasoning."""
    cache = tokens.get("cache")
    cache = cache if isinstance(cache, dict) else {}
    read, write, reasoning = count(cache.get("read")), count(cache.get("write")), count(tokens.get("reasoning"))
    return Usage(
        input_tokens=count(tokens.get("input")) + read + write,
        output_tokens=count(tokens.get("output")) + reasoning,
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=reasoning,
    )


def _cost(value: object) -> Decimal | None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None
