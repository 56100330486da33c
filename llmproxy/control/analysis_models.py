"""The JSON of the control API's misses, report and explain (`llmproxy.control.analysis_api`)."""

from typing import Literal

from pydantic import Field, JsonValue

from llmproxy.control.models import ApiModel
from llmproxy.journal import Source


class ExpectationTried(ApiModel):
    id: int = Field(description="the expectation's id (GET /expectations)")
    name: str = Field(description='as the mock names it in a miss: "expectation 2", "conversation 1"')
    answers: bool = Field(description="it would answer the request now")
    failed: list[str] = Field(description="why it would not: each predicate failed, `times` used up, …")


class Difference(ApiModel):
    path: str = Field(description="a JSON path into the body, or method, host, path, query")
    recorded: str = Field(description="what the recording has there: a short excerpt, redacted")
    received: str = Field(description="what the request has there: a short excerpt, redacted")


class RecordingTried(ApiModel):
    answers: bool = Field(description="a recording would answer the request now")
    exchange: int | None = Field(default=None, description="the recording that would answer, or the closest one")
    cassette: str | None = Field(default=None, description="the cassette that holds it")
    reason: str | None = Field(default=None, description="why none would answer, in the replay's words")
    differences: list[Difference] = Field(
        default_factory=list, description="where the request differs from the closest recording, first first"
    )


class Miss(ApiModel):
    seq: int = Field(description="the missed request's journal entry")
    method: str
    url: str = Field(description="redacted, as a cassette stores it")
    model: str | None = None
    test_id: str | None = None
    expectations: list[ExpectationTried] = Field(
        description="the closest expectations now, nearest first (fewest failures, then the most specific)"
    )
    recording: RecordingTried | None = Field(
        default=None, description="the closest recording now and the JSON paths that differ; absent without cassettes"
    )


class MissesQuery(ApiModel):
    test_id: str | None = Field(default=None, description="only requests sent with this x-llmproxy-test-id header")
    since: int = Field(default=0, ge=0, description="only entries numbered after this one")
    limit: int | None = Field(default=None, ge=1, description="only the newest this many misses")


class Misses(ApiModel):
    misses: list[Miss] = Field(description="the requests nothing answered, newest last, each with what came nearest")


class DebugRequest(ApiModel):
    """A request to try against everything loaded, as a client would send it; nothing is answered or counted."""

    method: str = Field(default="POST", min_length=1)
    url: str = Field(description="absolute: https://api.openai.com/v1/chat/completions")
    headers: dict[str, str] = Field(default_factory=dict)
    body: JsonValue = Field(default=None, description="the JSON body; absent: none")


class Debugged(ApiModel):
    answered_by: str | None = Field(
        default=None,
        description='what would answer it: "expectation 2", "recording 5" (a cassette\'s exchange); null: nothing',
    )
    expectations: list[ExpectationTried] = Field(
        description="every expectation in the order the mock tries them; absent mock: empty"
    )
    recording: RecordingTried | None = Field(default=None, description="the cassettes' verdict; absent without them")


class Selected(ApiModel):
    """Which of the journal's calls a report or an explanation covers: every one answered (a miss, llmproxy's
    own failure and background traffic aside), or those the filters keep."""

    source: Source | None = Field(default=None, description="only exchanges answered so")
    test_id: str | None = Field(default=None, description="only requests sent with this x-llmproxy-test-id header")
    session: str | None = Field(default=None, description="only this session, as the report names it")
    provider: str | None = Field(default=None, description="only this API family or vendor")
    model: str | None = Field(default=None, description="only this model (a glob: 'gpt-4o*')")
    since: int = Field(default=0, ge=0, description="only entries numbered after this one")
    max_calls: int = Field(default=0, ge=0, description="only the newest this many calls (0: all); said in the output")
    group_by: Literal["test", "conversation", "host"] = Field(
        default="test", description="what a session is: each test id's requests (those without one: `journal`)"
    )


class ReportQuery(Selected):
    format: Literal["markdown", "json", "csv", "html"] = Field(
        default="markdown", description="as `llmproxy report --format`: text/markdown, JSON, text/csv, text/html"
    )


class ExplainQuery(Selected):
    format: Literal["json", "timeline", "mermaid"] = Field(
        default="json", description="as `llmproxy explain --format`: JSON, or text/plain"
    )
