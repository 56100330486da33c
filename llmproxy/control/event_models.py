"""The JSON of the control API's event stream (`GET /llmproxy/api/v1/events`): what each server-sent event's
`data` holds, by its `event` name. Declared as models so the OpenAPI document publishes them."""

from typing import Any, Literal

from pydantic import Field

from llmproxy.control.models import ApiModel, ExpectationStanding, JournalCounts, JournalSummary


class Hello(ApiModel):
    """The first event: where the journal stands, so a reader that listed it knows what is new."""

    counts: JournalCounts | None = Field(None, description="the journal's counts; absent when the run keeps none")
    queue: int = Field(description="the batches of events this stream holds for its reader before it drops new ones")


class Counters(ApiModel):
    """The run's counters, sent when they change: chaos (its profiles, faults injected, quota and budget
    counters, as `GET /llmproxy/chaos` answers), the expectations with what each has served, the journal's
    counts."""

    chaos: dict[str, Any] | None = Field(None, description="as GET /llmproxy/chaos answers; absent without chaos")
    expectations: list[ExpectationStanding] | None = Field(
        None, description="as GET /expectations lists them; absent without a mock stage"
    )
    counts: JournalCounts | None = None


class Dropped(ApiModel):
    """Events this stream dropped because its reader did not keep up: the page re-reads the journal."""

    dropped: int = Field(description="events dropped on this stream so far")


class StreamEvent(ApiModel):
    """One server-sent event: `event: NAME` and `data: JSON` (an `entry` also has `id: SEQ`)."""

    event: Literal["hello", "entry", "counters", "dropped"]
    data: Hello | JournalSummary | Counters | Dropped = Field(
        description="hello: where the journal stands; entry: a new journal entry as GET /journal lists it; "
        "counters: the run's counters, when they change; dropped: events dropped for a slow reader"
    )
