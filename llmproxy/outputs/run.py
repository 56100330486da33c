"""`llmproxy record|replay|mock --json`: how the run ended, and every request it answered."""

from typing import Any, Literal

from pydantic import Field, JsonValue

from llmproxy import redacted_logs
from llmproxy.cassette.redact import Redactor
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


class Run(Document):
    command: Literal["record", "replay", "mock"]
    exitStatus: int = Field(description="llmproxy's exit status (README: Exit statuses)")
    commandExitStatus: int | None = Field(description="the wrapped command's own status; null without one")
    proxy: str = Field(description="the proxy's URL")
    describe: str = Field(description="what the run did: the mode and the files")
    summary: list[str] = Field(description="the summary lines printed on stderr, redacted")
    misses: list[str] = Field(description="each request nothing answered: the closest recording, what differs")
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
