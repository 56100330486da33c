"""`llmproxy record|replay|mock --json`: how the run ended, and every request it answered.

Schema version 2: each miss is an object whose differences are fields (`path`, `recorded`, `received`) and
whose `cassette` is the file of the closest recording — what a CI annotation needs (`::error file=…`). In
version 1 a miss was its diagnostic's text, which is now its `message`.
"""

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, JsonValue

from llmproxy.cassette import redacted_logs
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import ReplayMiss
from llmproxy.meter import Answered, Call, totals
from llmproxy.outputs import Document, Part

_REDACTOR = Redactor()


class ToolCallRow(Part):
    name: str
    arguments: JsonValue = Field(description="as the model sent them, redacted")


class CallRow(Part):
    seq: int = Field(description="1, 2, … in the order the answers ended")
    method: str
    url: str = Field(description="without the query string")
    provider: str | None
    model: str | None
    status: int | None = Field(description="null: the upstream never answered")
    answered: Answered = Field(description="who answered: hit (a cassette), mock, upstream, injected, miss, error")
    inputTokens: int | None = Field(description="the whole prompt, cache reads and writes included; null: no usage")
    outputTokens: int | None
    cachedInputTokens: int | None
    cacheWriteTokens: int | None
    costUsd: str | None = Field(description="a decimal string of US dollars; null: not priced")
    unpriced: str | None = Field(description="why the call could not be priced")
    streamed: bool
    latencyMs: float | None
    ttftMs: float | None = Field(description="until the first event of a stream")
    toolCalls: list[ToolCallRow]
    detail: str = Field(description="a miss: why nothing answered it")


class RunTotals(Part):
    calls: int
    inputTokens: int
    outputTokens: int
    cachedInputTokens: int
    costUsd: str = Field(description="of the priced calls")
    unpricedCalls: int = Field(description="calls with usage that could not be priced: not in costUsd")


class UnusedRow(Part):
    id: int
    method: str
    url: str


class Difference(Part):
    path: str = Field(description="a JSON path into the body ($.messages[1].content), or method, host, path, query")
    recorded: str = Field(description="what the closest recording has there: a short excerpt, redacted")
    received: str = Field(description="what the request had there: a short excerpt, redacted")


type MissReason = Literal["differs", "exhausted", "faults_only", "empty"]


class Miss(Part):
    request: str = Field(description="the method and URL, redacted: `POST https://api.anthropic.com/v1/messages`")
    reason: MissReason = Field(
        description="no recording matches it (the closest `differences` say where); every recording that matches"
        " was served already; only injected faults match it, and chaos is on; the cassettes hold nothing"
    )
    cassette: str | None = Field(description="the cassette holding the closest recording")
    closestExchange: int | None = Field(description="its id in that cassette")
    differences: list[Difference] = Field(description="where the request differs from it, first first")
    message: str = Field(description="the diagnostic, as the summary prints it")


class Run(Document):
    schemaVersion: Literal[2] = 2  # type: ignore[assignment]
    command: Literal["record", "replay", "mock"]
    exitStatus: int = Field(description="llmproxy's exit status (README: Exit statuses)")
    commandExitStatus: int | None = Field(description="the wrapped command's own status; null without one")
    proxy: str = Field(description="the proxy's URL")
    describe: str = Field(description="what the run did: the mode and the files")
    summary: list[str] = Field(description="the summary lines printed on stderr, redacted")
    misses: list[Miss] = Field(description="each request no recording answered, and why")
    unused: list[UnusedRow] = Field(description="recorded exchanges never served")
    refused: list[str] = Field(description="connections out that --allow-host did not let through")
    calls: list[CallRow]
    totals: RunTotals


def call_row(call: Call) -> CallRow:
    usage = call.usage
    counts: dict[str, Any] = {
        "inputTokens": usage.input_tokens if usage else None,
        "outputTokens": usage.output_tokens if usage else None,
        "cachedInputTokens": usage.cache_read_tokens if usage else None,
        "cacheWriteTokens": usage.cache_write_tokens if usage else None,
    }
    tools = [ToolCallRow(name=t.name, arguments=_REDACTOR.json(t.arguments)) for t in call.tool_calls]
    return CallRow(
        seq=call.seq,
        method=call.method,
        url=call.url,
        provider=call.provider.value if call.provider is not None else None,
        model=call.model,
        status=call.status,
        answered=call.answered,
        **counts,
        costUsd=str(call.cost_usd) if call.cost_usd is not None else None,
        unpriced=call.unpriced,
        streamed=call.streamed,
        latencyMs=call.latency_ms,
        ttftMs=call.ttft_ms,
        toolCalls=tools,
        detail=redacted_logs.redact(call.detail),
    )


def miss_row(miss: ReplayMiss, cassette: Path | None) -> Miss:
    redact = redacted_logs.redact
    reason: MissReason = "differs"
    if miss.exhausted:
        reason = "exhausted"
    elif miss.faults_only:
        reason = "faults_only"
    elif miss.closest is None:
        reason = "empty"
    return Miss(
        request=redact(miss.request),
        reason=reason,
        cassette=str(cassette) if cassette is not None else None,
        closestExchange=miss.closest.id if miss.closest is not None else None,
        differences=[
            Difference(path=d.path, recorded=redact(d.recorded), received=redact(d.received)) for d in miss.differences
        ],
        message=redact(miss.explain()),
    )


def run_totals(calls: list[Call]) -> RunTotals:
    total = totals(calls)
    return RunTotals(
        calls=total.calls,
        inputTokens=total.tokens.input,
        outputTokens=total.tokens.output,
        cachedInputTokens=total.tokens.cache_read,
        costUsd=str(total.cost_usd),
        unpricedCalls=len(total.unpriced),
    )
