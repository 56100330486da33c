"""An agent's logged answers as exchanges, for the dashboard (`llmproxy ui LOGS`): each answer is an exchange
whose response is the body the API would have sent for it (its text, tool calls and usage, in the provider's
own format), and whose request holds only the model — a log keeps no request. A note on each says which log
line it came from, so nothing passes for a recording."""

from collections.abc import Sequence
from pathlib import Path

import orjson

from llmproxy.agent_logs.entries import LogEntry
from llmproxy.agent_logs.read import read_logs
from llmproxy.cassette.model import Exchange
from llmproxy.model import Completion, Provider, StopReason, ToolCall
from llmproxy.providers.registry import CHAT_CODECS

_CODECS = {
    Provider.ANTHROPIC: "anthropic-messages",
    Provider.OPENAI: "openai-responses",
    Provider.GEMINI: "gemini-generate",
}
_HEADERS = ["content-type: application/json"]
_HTTP = "HTTP/1.1"


def logged_exchanges(logs: Sequence[tuple[Path, str]]) -> list[tuple[str, list[Exchange]]]:
    """Each log's answers (counted once across the logs, `read_logs`) as exchanges, named by their log."""
    entries, _ = read_logs(logs)
    by_log: dict[str, list[LogEntry]] = {str(path): [] for path, _ in logs}
    for entry in entries:
        by_log[entry.source].append(entry)
    return [(name, log_exchanges(found)) for name, found in by_log.items() if found]


def log_exchanges(entries: list[LogEntry]) -> list[Exchange]:
    """The answers as exchanges, numbered from 1 in the order given."""
    return [_exchange(number, entry) for number, entry in enumerate(entries, 1)]


def _exchange(number: int, entry: LogEntry) -> Exchange:
    codec = CHAT_CODECS[_CODECS[entry.provider]]
    model = entry.model or "unknown"
    url, request = _request(entry, model)
    completion = Completion(
        id=entry.response_id,
        model=model,
        text=entry.text,
        tool_calls=tuple(
            ToolCall(call.id, call.name, call.arguments if isinstance(call.arguments, dict) else {})
            for call in entry.tool_calls
        ),
        stop_reason=StopReason.TOOL_USE if entry.tool_calls else StopReason.END_TURN,
        usage=entry.usage,
    )
    answer = orjson.loads(codec.encode_response(completion, request))
    head = {"method": "POST", "url": url, "http_version": _HTTP, "headers": _HEADERS, "body": {"json": request}}
    return Exchange.model_validate(
        {
            "id": number,
            "provider": codec.provider.value,
            "operation": codec.operation.value,
            "model": entry.model,
            "request": head,
            "response": {
                "status": 200,
                "reason": "OK",
                "http_version": _HTTP,
                "headers": _HEADERS,
                "body": {"json": answer},
            },
            "timings": {"started_at": entry.started_at},
            "notes": [
                f"read from {entry.agent}'s log {entry.source}, line {entry.line}: the request is not in the log"
            ],
        }
    )


def _request(entry: LogEntry, model: str) -> tuple[str, dict[str, object]]:
    if entry.provider is Provider.GEMINI:
        return f"{entry.url}/{model}:generateContent", {"contents": []}
    if entry.provider is Provider.OPENAI:
        return entry.url, {"model": model, "input": []}
    return entry.url, {"model": model, "max_tokens": 1, "messages": []}
