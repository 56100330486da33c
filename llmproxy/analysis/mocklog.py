"""A `llmproxy mock --log FILE` as report calls: one per answered chat request.

A mock log keeps each request's gist, not the request (docs/mock.md): its provider, model, turn, the answer's
text, tool calls and tokens (declared in the expectations, or estimated by the mock and marked so). So a
report over it has costs, tokens, tool calls and the KPIs; the signals that read the request itself (system
prompt, tools offered, context, duplicates) have nothing to read, and stay quiet.
"""

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from llmproxy.analysis.calls import RecordedCall, ToolUse, answer_call, fingerprint
from llmproxy.errors import LlmproxyError
from llmproxy.model import Operation, Provider, Usage
from llmproxy.pricing import PriceBook
from llmproxy.providers.routes import detect


def is_mock_log(path: Path) -> bool:
    """Whether a file is a mock log: JSON lines whose first entry has the log's `seq`."""
    try:
        with path.open("rb") as handle:
            first = handle.readline()
        return isinstance(entry := orjson.loads(first), dict) and "seq" in entry and "host" in entry
    except (OSError, orjson.JSONDecodeError):
        return False


def mock_log_calls(path: Path, book: PriceBook, session: str, skipped: dict[str, int]) -> Iterator[RecordedCall]:
    """Raises LlmproxyError naming the line of an entry that is not JSON."""
    undated = datetime.fromtimestamp(path.stat().st_mtime, UTC)  # entries written before the log had times
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise LlmproxyError(f"{path}: line {number}: not JSON: {exc}") from None
        if not isinstance(entry, dict) or entry.get("provider") is None or "turnIndex" not in entry:
            skipped["not a chat request"] = skipped.get("not a chat request", 0) + 1
            continue
        if "miss" in entry:
            skipped["no expectation matched"] = skipped.get("no expectation matched", 0) + 1
            continue
        yield _call(entry, path, book, session, undated)


def _call(entry: dict[str, Any], path: Path, book: PriceBook, session: str, undated: datetime) -> RecordedCall:
    started = datetime.fromisoformat(entry["startedAt"]) if "startedAt" in entry else undated
    provider = Provider(entry["provider"])
    gist = entry.get("usage") or {}
    usage = Usage(
        input_tokens=gist.get("inputTokens", 0),
        output_tokens=gist.get("outputTokens", 0),
        cache_read_tokens=gist.get("cachedInputTokens", 0),
        cache_write_tokens=gist.get("cacheWriteTokens", 0),
        reasoning_tokens=gist.get("reasoningTokens", 0),
        estimated=gist.get("estimated", not gist),
    )
    url = f"https://{entry['host']}{entry['path']}"
    route = detect(entry["host"], entry["path"])
    model = entry.get("model")
    status = entry.get("status")
    calls = tuple(
        ToolUse(f"call_{entry['seq']}_{n}", call["name"], arguments, fingerprint(f"{call['name']}\n{arguments}"))
        for n, call in enumerate(entry.get("toolCalls", []))
        if (arguments := orjson.dumps(call.get("arguments", {}), option=orjson.OPT_SORT_KEYS).decode())
    )
    return answer_call(
        source=str(path),
        exchange_id=entry["seq"],
        session=session,
        conversation=f"{path}#{entry.get('answeredBy', '')}",
        started_at=started,
        provider=provider,
        operation=route.operation if route is not None else Operation.CHAT_COMPLETIONS,
        vendor=book.vendor(None, url, provider),
        host=entry["host"],
        path=entry["path"].split("?", 1)[0],
        url=url,
        model=model,
        status=status,
        error=entry.get("error"),
        usage=usage,
        cost=book.cost(usage, model, at=started, url=url, provider=provider),
        tool_calls=calls,
        finish_reason=("tool_use" if calls else "end_turn") if status == 200 else None,
        message_count=2 * entry["turnIndex"] + 1,
        output_text=entry.get("text", ""),
    )
