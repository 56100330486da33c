"""An agent's logged answer as a report call (`llmproxy.agent_logs`): the log's counts, priced by the same
book as a recorded call.

A log keeps each answer, not the request that asked for it: a report over logs has costs, tokens, tool calls
and the KPIs; the signals that read the request itself (system prompt, tools offered, context, duplicates)
have nothing to read, and stay quiet (docs/agent-logs.md lists them).
"""

import functools

import orjson

from llmproxy.agent_logs.entries import LogEntry, LoggedTool
from llmproxy.analysis.calls import RecordedCall, ToolUse, answer_call, fingerprint
from llmproxy.model import Operation, Provider
from llmproxy.pricing import PriceBook

_OPERATIONS = {
    Provider.ANTHROPIC: Operation.MESSAGES,
    Provider.OPENAI: Operation.RESPONSES,
    Provider.GEMINI: Operation.GENERATE_CONTENT,
}


def log_call(entry: LogEntry, book: PriceBook, session: str) -> RecordedCall:
    """An answer as a report row: what the log says of it (the request is not in the log: `answer_call`)."""
    host, path = _host_and_path(entry.url)
    calls = tuple(map(_tool_use, entry.tool_calls))
    return answer_call(
        source=entry.source,
        exchange_id=entry.line,
        session=session,
        conversation=f"{entry.agent}:{entry.session}",
        started_at=entry.started_at,
        provider=entry.provider,
        operation=_OPERATIONS.get(entry.provider, Operation.CHAT_COMPLETIONS),
        vendor=_vendor(book, entry.url, entry.provider),
        host=host,
        path=path,
        url=entry.url,
        model=entry.model,
        status=200,
        error=None,
        usage=entry.usage,
        cost=book.cost(entry.usage, entry.model, at=entry.started_at, url=entry.url, provider=entry.provider),
        tool_calls=calls,
        finish_reason=entry.stop_reason,
        output_text=entry.text,
    )


def _tool_use(call: LoggedTool) -> ToolUse:
    arguments = orjson.dumps(call.arguments, option=orjson.OPT_SORT_KEYS).decode()
    return ToolUse(call.id, call.name, arguments, fingerprint(f"{call.name}\n{arguments}"))


@functools.lru_cache(maxsize=16)
def _host_and_path(url: str) -> tuple[str, str]:
    """Split once per URL: an agent's answers all name the same one or two."""
    host, path = url.removeprefix("https://").split("/", 1)
    return host, f"/{path}"


@functools.lru_cache(maxsize=16)
def _vendor(book: PriceBook, url: str, provider: Provider) -> str | None:
    return book.vendor(None, url, provider)
