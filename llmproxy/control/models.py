"""The JSON the control API speaks, as pydantic models: the router validates what comes in with them, dumps
what goes out with them, and makes the OpenAPI document from them (and the MCP tools their input schemas), so
the three cannot drift apart. Field names are camelCase on the wire, as in MockServer's API and the chaos
endpoint."""

from datetime import datetime
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    field_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from llmproxy.cassette.model import Exchange
from llmproxy.journal import Source
from llmproxy.mock import spec


class ApiModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class Listener(ApiModel):
    url: str = Field(description="where clients connect: the forward proxy, or a reverse listener's base URL")
    target: str | None = Field(None, description="the upstream a reverse listener forwards to")


class JournalCounts(ApiModel):
    kept: int = Field(description="entries the journal holds now")
    capacity: int = Field(description="the most it holds; beyond, the oldest are dropped")
    dropped: int = Field(description="entries pushed out because the journal was full")
    last: int = Field(description="the sequence number of the newest entry ever kept (0: none yet)")
    by_source: dict[Source, int] = Field(description="exchanges seen since the start, by who answered")


class ServedCassette(ApiModel):
    path: str
    exchanges: int = Field(description="the recorded exchanges it holds")


class Status(ApiModel):
    version: str
    mode: str = Field(description="record, replay, replay+record (new_episodes) or mock")
    describe: str = Field(description="what the run does, in words")
    proxy_url: str = Field(description="the forward proxy (HTTPS_PROXY)")
    base_url: str | None = Field(None, description="llmproxy's own base URL (LLMPROXY_BASE_URL), when it has one")
    listeners: list[Listener]
    refused: int = Field(description="requests nothing answered and the network was closed to")
    expectations: int | None = Field(
        None, description="expectations standing, the file's and those added since; absent when nothing holds any"
    )
    cassettes: list[ServedCassette] = Field(
        default_factory=list, description="the cassettes the replay serves, in the order they are tried"
    )
    replayed: int | None = Field(None, description="requests a cassette answered; absent when nothing replays")
    recording: str | None = Field(None, description="the cassette the run records to, when it records")
    journal: JournalCounts | None = Field(None, description="absent when the run keeps no journal")


class JournalQuery(ApiModel):
    provider: str | None = Field(None, description="only this API: anthropic, openai, gemini, bedrock, …")
    model: str | None = Field(None, description="only requests for this model")
    path: str | None = Field(None, description="only requests whose path starts with this")
    source: Source | None = Field(None, description="only exchanges answered so")
    test_id: str | None = Field(None, description="only requests sent with this x-llmproxy-test-id header")
    since: int = Field(0, ge=0, description="only entries numbered after this one")
    limit: int | None = Field(None, ge=1, description="only the newest this many of what matches")


class TokenUsage(ApiModel):
    """Token counts with one meaning across providers: `inputTokens` is the whole prompt (cache reads and writes
    included), `outputTokens` includes reasoning."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    estimated: bool = Field(False, description="counted by llmproxy: the provider reported none")


class JournalSummary(ApiModel):
    seq: int = Field(description="its number in the journal, from 1, in the order exchanges ended")
    source: Source
    door: str | None = Field(
        None, description="how the request reached llmproxy: proxy (HTTPS_PROXY), relay (a base URL), websocket"
    )
    at: datetime = Field(description="when the request started")
    method: str
    url: str = Field(description="redacted, as a cassette stores it")
    provider: str | None = None
    operation: str | None = None
    model: str | None = None
    status: int | None = Field(None, description="absent when no answer was sent (a dropped connection)")
    streaming: bool
    latency_ms: float | None = None
    ttfb_ms: float | None = Field(None, description="time to the answer's first byte (a stream's first event)")
    latency_recorded: bool = Field(
        False, description="latencyMs and ttfbMs are the recorded answer's: a replay answers at once"
    )
    usage: TokenUsage | None = Field(None, description="absent when the answer reported none")
    cost_usd: str | None = Field(None, description="a decimal, from the maintained price data")
    unpriced: str | None = Field(None, description="why an answer with usage has no cost")
    test_id: str | None = None
    error: str | None = None
    injected: list[str] = Field(default_factory=list, description="the kinds of fault put in on purpose")


class JournalPage(ApiModel):
    entries: list[JournalSummary] = Field(description="what matched, newest last")
    counts: JournalCounts


class JournalEntry(ApiModel):
    seq: int
    source: Source
    test_id: str | None = None
    exchange: Exchange = Field(description="the whole exchange, redacted, in the cassette's shape")


class EntryNumber(ApiModel):
    seq: int = Field(ge=1, description="an entry's sequence number")


class Cleared(ApiModel):
    cleared: int = Field(description="how many were removed")


class ExpectationStanding(ApiModel):
    id: int = Field(description="its number: the file's entries are 1…n, each one added later numbered after")
    priority: int
    times: int | None = Field(None, description="how many requests it answers in all; absent: any number")
    served: int = Field(description="requests it has answered (a conversation: turns served, every session)")
    remaining: int | None = Field(None, description="requests it may still answer, when it has `times`")
    next_turn: dict[str, int] | None = Field(
        None,
        description='a conversation: the turn (from 1) each session key gets next ("": no isolation key); an '
        'expectation with a script: the script\'s turn it serves next, under ""',
    )
    test_id: str | None = Field(None, description="added for this test: it answers only requests that carry it")
    definition: spec.Entry = Field(
        description="the entry as it was given (only the fields it set; a script named by path is shown loaded), "
        "so a listing can be sent back as it is"
    )

    @field_serializer("definition", mode="wrap")
    def _as_given(self, definition: spec.Entry, dump: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        """Only what the entry set: pydantic would fill every default in."""
        if info.mode_is_json():
            return definition.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return dump(definition)


class Expectations(ApiModel):
    expectations: list[ExpectationStanding] = Field(description="every entry, in the order they are tried")


class Added(ApiModel):
    added: list[int] = Field(description="the ids the new entries were given, in the order sent")


class ExpectationNumber(ApiModel):
    id: int = Field(ge=1, description="an expectation's id")


class Removed(ApiModel):
    removed: int


class Scope(ApiModel):
    test_id: str | None = Field(
        None,
        min_length=1,
        description="only this test's expectations: those added with it answer only requests sent with it in "
        "the x-llmproxy-test-id header",
    )


class JournalScope(ApiModel):
    """Which of the journal's entries a verify reads: every one it keeps, or only some."""

    source: Source | None = Field(None, description="only exchanges answered so")
    test_id: str | None = Field(None, description="only requests sent with this x-llmproxy-test-id header")


class Counted(JournalScope):
    """A count that passes: `exactly`, or `atLeast` and/or `atMost` (none given: at least one)."""

    exactly: int | None = Field(None, ge=0)
    at_least: int | None = Field(None, ge=0)
    at_most: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _one_count(self) -> Self:
        if self.exactly is not None and (self.at_least is not None or self.at_most is not None):
            raise ValueError("give exactly, or atLeast and/or atMost, not both")
        if self.at_least is not None and self.at_most is not None and self.at_least > self.at_most:
            raise ValueError(f"atLeast {self.at_least} is more than atMost {self.at_most}")
        return self

    def bounds(self) -> tuple[int, int | None]:
        """The counts that pass: from, to (None: no upper bound)."""
        if self.exactly is not None:
            return self.exactly, self.exactly
        if self.at_least is None and self.at_most is None:
            return 1, None
        return self.at_least or 0, self.at_most


class VerifyRequests(Counted):
    """How many of the journal's requests hold to `match` (the expectations file's `match`: one predicate
    language for answering and verifying), against a count: `exactly`, or `atLeast` and/or `atMost` (none given:
    at least one)."""

    match: spec.Match = Field(default_factory=spec.Match, description="as an expectation's match; {}: any request")


class NearMiss(ApiModel):
    seq: int
    url: str
    model: str | None = None
    failed: list[str] = Field(description="each predicate of the match this request does not hold to")


class Verified(ApiModel):
    ok: bool
    count: int = Field(description="requests that hold to the match")
    expected: str = Field(description="the count that passes, in words")
    matched: list[int] = Field(description="their sequence numbers, oldest first")
    closest: list[NearMiss] = Field(
        default_factory=list, description="when it fails: the requests that came nearest, fewest failures first"
    )


class Reset(ApiModel):
    expectations: int | None = Field(
        None, description="expectations, mock MCP servers and A2A agents removed; absent when the run has no mock"
    )
    journal: int | None = Field(None, description="journal entries forgotten; absent when it keeps none")
    chaos: int = Field(description="hosts whose chaos profile was removed")
    counters: bool = Field(
        description="whether quota and budget counters started afresh (not when shared in Redis: --state)"
    )
