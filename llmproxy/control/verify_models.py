"""The JSON of the verifies beyond a count of requests (`llmproxy.control.verify_api`): the order requests
arrived in, and the gates `llmproxy verify` runs on cassettes — a tool called, structured output, cost."""

from decimal import Decimal
from typing import Any, Literal

from pydantic import Field, JsonValue, field_validator

from llmproxy.control.models import ApiModel, Counted, JournalScope, NearMiss
from llmproxy.mock import spec
from llmproxy.mock.scripted import compiled


class VerifySequence(JournalScope):
    """Requests arrived in this order, as MockServer's verify sequence: a request holding to each `match` came
    after one holding to the match before it (others may come between)."""

    sequence: list[spec.Match] = Field(min_length=1, description="as an expectation's match, one per step in order")


class SequenceVerified(ApiModel):
    ok: bool
    matched: list[int] = Field(
        description="the sequence number of the request that held to each step, in order, as far as the order held"
    )
    broken_step: int | None = Field(default=None, description="when it fails: the step (from 1) no request came for")
    reason: str | None = Field(default=None, description="when it fails: why, in one line")
    earlier: list[int] = Field(
        default_factory=list,
        description="when it fails: requests that hold to the broken step but came before the step before it",
    )
    closest: list[NearMiss] = Field(
        default_factory=list,
        description="when it fails: what came instead, after the step before it — the requests nearest the broken "
        "step, fewest failures first",
    )


class VerifyToolCall(Counted):
    """The model called tool `name` as many times as expected (none given: at least once) in the answers the
    journal holds, as `llmproxy verify tool-call` counts them in a cassette."""

    name: str = Field(min_length=1, description="the tool's name")
    args_regex: str | None = Field(
        default=None, description="a regular expression its arguments (compact JSON) contain"
    )
    arguments: JsonValue = Field(
        default=None,
        description="a JSON predicate its arguments hold to: an object holds when each member given holds in it "
        "(others may be there too), anything else when equal",
    )
    allow_partial: bool = Field(default=False, description="pass on the answers it could read when some could not be")

    @field_validator("args_regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return value if value is None else compiled(value)


class VerifyStructuredOutput(JournalScope):
    """Every answer with text is JSON that meets `schema`, as `llmproxy verify structured-output` checks a
    cassette (answers without text — tool calls only, failures — are skipped and counted)."""

    json_schema: dict[str, Any] = Field(alias="schema", description="a JSON Schema (its $schema draft, else 2020-12)")
    allow_partial: bool = Field(default=False, description="pass on the answers it could read when some could not be")


class VerifyCost(JournalScope):
    """The answers' estimated cost is within a budget, priced as `llmproxy report` prices them, as
    `llmproxy verify cost` judges a cassette."""

    max_usd: Decimal = Field(ge=0, description='the budget in US dollars: 0.40 or "0.40"')
    price_as: str | None = Field(default=None, description="price every call as this model (the one it used otherwise)")
    allow_unpriced: bool = Field(default=False, description="pass even when some calls could not be priced")
    allow_partial: bool = Field(default=False, description="pass on the answers it could read when some could not be")


class GateVerified(ApiModel):
    """A gate's verdict over the journal, in the shape `llmproxy verify --json` prints it for a cassette."""

    ok: bool = Field(description="the gate passed")
    outcome: Literal["pass", "fail", "could_not_check"] = Field(
        description="could_not_check: nothing it could honestly judge (no answer, an invalid schema…)"
    )
    reasons: list[str] = Field(description="why it failed or could not check; `call N` is the Nth of `calls`")
    summary: str = Field(description="what it found, with its figures")
    calls: list[int] = Field(description="the sequence numbers of the entries it judged, in the order it read them")
    details: dict[str, Any] = Field(description="the gate's own figures, as `llmproxy verify --json` gives them")


class ToolCallVerified(GateVerified):
    tools_called: dict[str, int] = Field(
        description="every tool the model called in these answers, with how often: what came instead on a failure"
    )


class VerifyDrift(ApiModel):
    """Re-send a cassette's requests to the live provider and compare the answers' shapes with the recorded
    ones (`llmproxy verify drift --live`): fields added, removed or retyped, never wording."""

    cassette: str = Field(min_length=1, description="the cassette to re-send (relative: to where llmproxy runs)")
    live: Literal[True] = Field(
        description="must be true: the requests really are sent to the provider, with the keys in llmproxy's "
        "environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY), and cost what they cost"
    )
    timeout: float = Field(default=60.0, ge=1, description="seconds per request")


class DriftVerified(ApiModel):
    """The drift gate's verdict, in the shape `llmproxy verify drift --json` prints it."""

    ok: bool = Field(description="every answer had the recorded shape")
    outcome: Literal["pass", "fail", "could_not_check"] = Field(
        description="could_not_check: an exchange could not be re-sent (no key, the network, a non-2xx answer)"
    )
    reasons: list[str] = Field(description="each exchange that drifted, with its paths, or could not be checked")
    summary: str
    details: dict[str, Any] = Field(
        description="exchanges, drifted, checked, couldNotCheck, and per exchange addedPaths, removedPaths, "
        "typeChangedPaths"
    )
