"""Codex's session logs: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl` (CODEX_HOME defaults
to `~/.codex`; `archived_sessions/` holds archived ones the same way).

Versions from 0.170 write a `token_usage_record` per API answer, naming the answer (`response_id`) and its
usage: those are read. Older ones write only `token_count` events, which repeat their counts whenever the
interface refreshes: an event counts only when the thread's running total (`total_token_usage`) moved, for
what it moved by. A forked or subagent thread's file starts by replaying its parent's history, the parent's
`session_meta` first: what follows it is keyed to the parent's thread, so it is counted once, with the parent.
"""

import contextlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from llmproxy.agent_logs.entries import Api, LogEntry, LoggedTool, Skips, count, json_lines, timestamp
from llmproxy.model import Provider, Usage

API: Api = (Provider.OPENAI, "https://api.openai.com/v1/responses")
_FIELDS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)


def is_codex_log(first: dict[str, Any]) -> bool:
    return first.get("type") == "session_meta"


def codex_entries(path: Path, skips: Skips) -> list[LogEntry]:
    undated = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    records: list[LogEntry] = []
    counted: list[LogEntry] = []  # from token_count events: used only when the file has no usage records
    thread = path.stem
    model: str | None = None
    totals: dict[str, tuple[int, ...]] = {}  # thread → its running total as last seen
    tools: list[LoggedTool] = []
    text: list[str] = []
    for number, line in json_lines(path, skips):
        kind, payload = line.get("type"), line.get("payload")
        if not isinstance(payload, dict):
            continue
        if kind == "session_meta":
            thread = str(payload.get("id") or payload.get("session_id") or thread)
        elif kind == "turn_context":
            model = payload.get("model") if isinstance(payload.get("model"), str) else model
        elif kind == "response_item":
            _answer_part(payload, tools, text)
        elif kind == "token_usage_record" and isinstance(payload.get("usage"), dict):
            response = payload.get("response_id")
            key = ("codex", str(response)) if response else ("codex", thread, str(line.get("timestamp")))
            entry = _entry(path, number, str(payload.get("thread_id") or thread), key, line, undated, model)
            entry.response_id = str(response) if response else None
            entry.usage = _usage(payload["usage"])
            records.append(_finish(entry, tools, text))
        elif kind == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            total = info.get("total_token_usage") if isinstance(info, dict) else None
            if not isinstance(total, dict):
                continue
            vector = tuple(count(total.get(name)) for name in _FIELDS)
            before = totals.get(thread, (0,) * len(_FIELDS))
            if vector == before:
                skips.add("repeated token count", number)
                continue
            totals[thread] = vector
            moved = dict(zip(_FIELDS, (now - then for now, then in zip(vector, before, strict=True)), strict=True))
            entry = _entry(path, number, thread, ("codex", thread, *map(str, vector)), line, undated, model)
            entry.usage = _usage(moved)
            counted.append(_finish(entry, tools, text))
    return records or counted


def _entry(
    path: Path, number: int, thread: str, key: tuple[str, ...], line: dict[str, Any], undated: datetime, model: object
) -> LogEntry:
    return LogEntry.found("codex", path, number, thread, key, timestamp(line.get("timestamp"), undated), model, API)


def _answer_part(payload: dict[str, Any], tools: list[LoggedTool], text: list[str]) -> None:
    """Gather what the model answered (its text, its function calls) until the usage that closes the answer."""
    if payload.get("type") == "function_call":
        arguments = payload.get("arguments")
        if isinstance(arguments, str):
            with contextlib.suppress(orjson.JSONDecodeError):  # kept as the text the model sent
                arguments = orjson.loads(arguments)
        tools.append(LoggedTool(str(payload.get("call_id", "")), str(payload.get("name", "")), arguments))
    elif payload.get("type") == "message" and payload.get("role") == "assistant":
        for part in payload.get("content") or ():
            if isinstance(part, dict) and part.get("type") == "output_text":
                text.append(str(part.get("text", "")))


def _finish(entry: LogEntry, tools: list[LoggedTool], text: list[str]) -> LogEntry:
    entry.tool_calls, entry.text = list(tools), "".join(text)
    entry.stop_reason = "tool_use" if tools else "end_turn"
    tools.clear()
    text.clear()
    return entry


def _usage(usage: dict[str, Any]) -> Usage:
    """OpenAI's counts: the input already holds the cached part, the output the reasoning."""
    return Usage(
        input_tokens=count(usage.get("input_tokens")),
        output_tokens=count(usage.get("output_tokens")),
        cache_read_tokens=count(usage.get("cached_input_tokens")),
        cache_write_tokens=count(usage.get("cache_write_input_tokens")),
        reasoning_tokens=count(usage.get("reasoning_output_tokens")),
    )
