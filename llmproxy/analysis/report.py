"""The report, schema version 1: what `llmproxy report --format json` writes and `--baseline` reads.

docs/json/report.schema.json is generated from these models (scripts/gen_schemas.py). Field names follow
MockServer's optimisation report where it has one (`totals.cacheHitRatio`, `verdict.totalEstimatedSavingUsd`,
`signals[].fix.configSnippet`…). Money is a decimal string of US dollars (`"0.0123"`): exact, never a binary
float; `null` where nothing could be priced. Ratios are numbers rounded to four places. Call indices are
1-based, in the order of `calls`.
"""

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, with_config

Money = str  # a decimal string of US dollars
Severity = Literal["HIGH", "MEDIUM", "LOW"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_ROW = ConfigDict(extra="forbid")
"""What a report holds one of per call, per message or per node of a graph (`CallRow`, `ToolCallRow`,
`AppendixMessage`, `GraphNode`, `GraphEdge`) is a plain dataclass, built without validation (a pydantic
model cost ~9 µs a call row, a tenth of a second over 10,000 calls), yet validated, serialised and described
in the schema by pydantic as part of `Report`, exactly as models of the same fields would be."""


@with_config(_ROW)
@dataclass(slots=True)
class ToolCallRow:
    id: str
    name: str
    arguments: Annotated[str, Field(description="the arguments as the model sent them (compact JSON), redacted")]


@with_config(_ROW)
@dataclass(slots=True)
class CallRow:
    index: Annotated[int, Field(ge=1)]
    session: str
    source: Annotated[str, Field(description="the cassette the call was read from")]
    exchangeId: int
    startedAt: Annotated[str, Field(description="ISO 8601, UTC")]
    provider: str
    vendor: Annotated[str | None, Field(description="who bills the call (the price library's vendor id)")]
    host: str
    path: str
    model: str | None
    status: Annotated[int | None, Field(description="the HTTP status; null when no response came")]
    error: str | None
    inputTokens: Annotated[int, Field(description="the whole prompt, cache reads and writes included")]
    cachedInputTokens: Annotated[int, Field(description="input tokens read from the provider's prompt cache")]
    cacheWriteTokens: Annotated[int, Field(description="input tokens written to the prompt cache (all lifetimes)")]
    cacheWrite1hTokens: Annotated[int, Field(description="of the cache writes, those with a one-hour lifetime")]
    outputTokens: Annotated[int, Field(description="reasoning tokens included")]
    reasoningTokens: int
    tokensEstimated: Annotated[bool, Field(description="llmproxy estimated the counts: the provider reported none")]
    estimatedCostUsd: Annotated[Money | None, Field(description="null: unpriced (left out of every total)")]
    costIsEstimated: bool
    pricing: Annotated[str, Field(description="the price's source, or why there is none")]
    latencyMs: float | None
    ttfbMs: float | None
    toolCalls: list[ToolCallRow]
    finishReason: str | None
    messageCount: Annotated[int, Field(description="history items the request sent, re-sent ones included")]
    systemPromptFingerprint: str | None
    definedToolNames: list[str]
    definedToolTokens: int
    retry: Annotated[bool, Field(description="it repeats one of the previous three calls of its session")]


class SessionRow(_Model):
    id: str
    callCount: int
    firstCall: int
    lastCall: int
    inputTokens: int
    outputTokens: int
    estimatedCostUsd: Money
    cacheHitRatio: float


class Totals(_Model):
    callCount: int
    failedCallCount: int = Field(0, description="calls that got no answer: an error status, or no response")
    pricedCallCount: int
    unpricedCallCount: int
    unpricedModels: list[str]
    inputTokens: int
    cachedInputTokens: int
    cacheWriteTokens: int
    outputTokens: int
    reasoningTokens: int
    estimatedCostUsd: Money = Field(description="priced calls only")
    costIsEstimated: bool
    totalLatencyMs: float
    toolCallCount: int
    cacheHitRatio: float = Field(description="cachedInputTokens / inputTokens (0 without input)")
    oneShotRate: float = Field(description="1 - retryCallCount / callCount (1 without calls)")
    retryCallCount: int
    providers: list[str]
    models: list[str]


class Fix(_Model):
    summary: str
    action: str
    configSnippet: str | None
    exampleExpectation: str | None
    docsUrl: str | None


class McpToolRef(_Model):
    server: str
    tool: str


class Signal(_Model):
    id: str
    severity: Severity
    urgency: float = Field(description="severity weight (1, 0.6, 0.3) x affected calls / calls")
    title: str
    detail: str
    affectedCalls: list[int]
    estimatedWastedInputTokens: int | None
    estimatedSavingUsd: Money | None
    recommendation: str
    fix: Fix
    mcpTools: list[McpToolRef] = Field(
        default_factory=list, description="the MCP server and tool the affected calls' tool results came from"
    )


class Verdict(_Model):
    grade: Literal["A", "B", "C", "D", "F"] = Field(description="what the findings could save: cost, not reliability")
    rationale: str = Field(description="the grade's reason, then `reliability` when there is one")
    totalEstimatedSavingUsd: Money
    totalWastedInputTokens: int
    savingFractionOfSpend: float
    costIsEstimated: bool
    highCount: int
    mediumCount: int
    lowCount: int
    reliability: str | None = Field(
        None,
        description="failed calls, retries and injected faults in words; null when none failed and none was injected",
    )


class Source(_Model):
    path: str
    exchanges: int
    calls: int
    skipped: dict[str, int] = Field(description="exchanges that are not chat calls, by reason")


class Filter(_Model):
    session: str | None = None
    host: str | None = None
    provider: str | None = None
    model: str | None = None
    since: str | None = None
    maxCalls: int
    droppedCalls: int = Field(description="older calls left out by maxCalls")


class Redaction(_Model):
    redactor: str
    placeholders: int = Field(description="secrets replaced in the calls and the appendix")


@with_config(_ROW)
@dataclass(slots=True)
class AppendixMessage:
    role: str
    text: Annotated[str, Field(description="redacted; cut at 2,000 characters, with a note that says so")]
    toolCalls: list[ToolCallRow]
    toolResults: Annotated[list[str], Field(description="the tools whose results the message carries")]


class AppendixConversation(_Model):
    session: str
    call: int = Field(description="the call whose request holds this, the conversation's richest")
    system: str = Field(description="redacted; cut at 2,000 characters, with a note that says so")
    messages: list[AppendixMessage]


class AppendixTool(_Model):
    name: str
    description: str
    parameters: str = Field(description="the JSON Schema of the arguments, redacted")
    calls: int = Field(description="requests that offered it")
    invoked: int = Field(description="times the model called it")


class Appendix(_Model):
    conversations: list[AppendixConversation]
    toolDefinitions: list[AppendixTool]


class SignalChange(_Model):
    id: str
    status: Literal["new", "resolved", "unchanged"]
    severity: Severity
    previousSeverity: Severity | None
    estimatedSavingUsd: Money | None
    previousEstimatedSavingUsd: Money | None


class KpiDelta(_Model):
    name: str
    previous: int | float | str = Field(description="counts are integers, ratios numbers, money a decimal string")
    current: int | float | str
    delta: int | float | str = Field(description="current - previous (for money, a decimal string)")


class Comparison(_Model):
    """`--baseline`: this report against an earlier one."""

    baseline: str = Field(description="the earlier report's file")
    previousGrade: Literal["A", "B", "C", "D", "F"]
    grade: Literal["A", "B", "C", "D", "F"]
    gradeDrop: int = Field(description="letters lost (negative: gained)")
    costIncrease: float | None = Field(description="relative change of the estimated cost; null if it was 0")
    signals: list[SignalChange]
    kpis: list[KpiDelta]


@with_config(_ROW)
@dataclass(slots=True)
class GraphNode:
    id: str
    kind: Annotated[str, Field(description="a message's role (SYSTEM, USER, ASSISTANT, TOOL…) or TOOL_CALL")]
    label: Annotated[str, Field(description="redacted; at most 80 characters")]


@with_config(ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True))
@dataclass(slots=True)
class GraphEdge:
    from_: Annotated[str, Field(alias="from")]
    to: str
    kind: Literal["NEXT", "INVOKES", "RESULT"]


class CallGraph(_Model):
    """The richest conversation as a graph: a node per message and per tool call; NEXT links messages in
    order, INVOKES a turn to the tool calls it made, RESULT a tool call to the message carrying its result."""

    session: str
    call: int
    nodes: list[GraphNode]
    edges: list[GraphEdge]


class InjectedFault(_Model):
    """One fault llmproxy put into a recorded call on purpose (docs/chaos.md), and what the client did next."""

    call: int = Field(description="the call it was put into")
    kind: str = Field(description="error, quota, token_quota, budget, drop, truncate, malformed, latency…")
    rule: str = Field(description="the profile that did it: a rule's name, --fail, a host, x-llmproxy-chaos")
    detail: str
    status: int | None = Field(description="the status the client was sent, for an error")
    retryAfterSeconds: float | None = Field(description="the retry-after the client was sent")
    request: str = Field(description="the call and its URL")
    next: Literal["retried", "carried_on", "gave_up", "answered"] = Field(
        description="retried the same request; carried on without (or with a broken) answer; sent nothing more;"
        " got the answer all the same (the fault only delayed or slowed it)"
    )
    retriedAfterSeconds: float | None = Field(description="from the faulted call's start to its retry's")
    honouredRetryAfter: bool | None = Field(description="the retry waited the retry-after; null without either")
    recovered: bool = Field(
        description="a successful answer came after it: to a retry of the request, or to a later one the client"
        " went on to (what the client got, in the same cassette)"
    )
    followed: str = Field(description="what the client did next, in words")


class Resilience(_Model):
    """The faults injected into the run, counted and listed, and whether the client got past all of them."""

    injected: dict[str, int] = Field(description="faults by kind")
    faults: list[InjectedFault]
    recovered: bool = Field(description="a successful answer came after every fault (each cassette judged alone)")
    verdict: str

    def counted(self) -> str:
        """The faults per kind in a phrase: "error 2, truncate 1"."""
        return ", ".join(f"{kind} {count}" for kind, count in self.injected.items())


class McpToolRow(_Model):
    """One MCP tool's calls in the run (its server's and the agent's side of the traffic, not the model's)."""

    server: str = Field(description="the name the server gave itself in initialize, else its address")
    tool: str
    calls: int
    errors: int = Field(description="no answer, an HTTP or JSON-RPC error, or a tool error (isError)")
    totalLatencyMs: float
    meanLatencyMs: float
    resultBytes: int = Field(description="the results' JSON, summed: what the agent had to feed its model")
    largestResultBytes: int


class Report(_Model):
    schemaVersion: Literal[1]
    command: Literal["report"] = Field(
        default="report", description="the command that printed it (docs/json-output.md)"
    )
    pricing: str = Field(description="the price library and any prices files")
    groupingBasis: Literal["CASSETTE", "FOLDER", "CONVERSATION", "HOST"]
    filter: Filter
    sources: list[Source]
    sessions: list[SessionRow]
    totals: Totals
    calls: list[CallRow]
    signals: list[Signal]
    verdict: Verdict
    redaction: Redaction
    appendix: Appendix
    callGraph: CallGraph | None = Field(description="the richest conversation of the report")
    baseline: Comparison | None = None
    resilience: Resilience | None = Field(None, description="faults llmproxy injected; null when none were")
    mcpTools: list[McpToolRow] = Field(
        default_factory=list, description="the MCP tool calls beside the model calls, per server and tool"
    )
