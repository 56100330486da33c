"""`llmproxy verify GATE --json`: the gate's verdict, one document per gate (docs/json/verify-*.schema.json).

Every gate's document says the same first: `outcome` (whose exit status is the README's: 0, 1, 2), `passed`,
one `reasons` line per failure (or why it could not check), the `summary` the text says after "passed", and
`coverage` (the calls it saw of those asked about; null for `drift`, which re-sends exchanges, not calls).
The gate's own figures follow.
"""

from typing import Any, Literal

from pydantic import Field, JsonValue

from llmproxy.analysis.report import InjectedFault
from llmproxy.outputs import Document, Part


class Coverage(Part):
    calls: int = Field(description="the calls the gate judged")
    leftOut: int = Field(description="older calls --max-calls left out")
    undecodable: int = Field(description="recorded exchanges that could not be decoded (unknown tokens, cost, tools)")
    complete: bool = Field(description="the gate saw every call it was asked about")


class Verification(Document):
    gate: str
    outcome: Literal["pass", "fail", "could_not_check"] = Field(description="exit status 0, 1 and 2")
    passed: bool
    reasons: list[str] = Field(description="why it failed or could not check, one line each (as on stderr)")
    summary: str = Field(description="what the gate found, in words: the figures it judged (`estimated cost …`)")
    note: str | None = Field(None, description="what a pass stands on when it is not every call (--allow-partial)")
    coverage: Coverage | None = Field(None, description="null when the gate never read the calls (drift, an error)")


class ToolCallMatch(Part):
    call: int = Field(description="the call (1-based, in the order judged) whose answer asked for the tool")
    id: str | None = Field(description="the tool call's id, as the model gave it")
    arguments: str = Field(description="as compact JSON")


class ToolCallVerification(Verification):
    command: Literal["verify tool-call"] = "verify tool-call"
    gate: Literal["tool-call"] = "tool-call"
    name: str | None = Field(None, description="the tool (null when the gate never read the calls)")
    count: int = 0
    matches: list[ToolCallMatch] = Field(default_factory=list)


class AnswerCheck(Part):
    call: int
    conforms: bool
    error: str | None = Field(None, description="the first error, or `not JSON`")


class StructuredOutputVerification(Verification):
    command: Literal["verify structured-output"] = "verify structured-output"
    gate: Literal["structured-output"] = "structured-output"
    checked: int = Field(0, description="answers with text, each validated")
    conforming: int = 0
    skippedNoOutput: int = Field(0, description="answers without text (tool calls only, failures)")
    results: list[AnswerCheck] = Field(default_factory=list)


class CostVerification(Verification):
    command: Literal["verify cost"] = "verify cost"
    gate: Literal["cost"] = "cost"
    checked: int = Field(0, description="calls totalled")
    unpriced: int = Field(0, description="calls that could not be priced: not in the total")
    totalCostUsd: str | None = Field(None, description="the estimated total, a decimal string of US dollars")
    maxCostUsd: str | None = Field(None, description="--max-usd")
    authoritative: bool = Field(False, description="every selected call was seen and priced")


class ResilienceVerification(Verification):
    command: Literal["verify resilience"] = "verify resilience"
    gate: Literal["resilience"] = "resilience"
    injected: dict[str, int] = Field(default_factory=dict, description="faults by kind")
    faults: list[InjectedFault] = Field(default_factory=list)


class ReportVerification(Verification):
    command: Literal["verify report"] = "verify report"
    gate: Literal["report"] = "report"
    grade: str | None = None
    previousGrade: str | None = Field(None, description="the baseline's")
    newSignals: list[str] = Field(default_factory=list, description="signals the baseline did not have")


class DriftCheck(Part):
    exchange: int
    status: Literal["same", "drift", "could_not_check"]
    addedPaths: list[str]
    removedPaths: list[str]
    typeChangedPaths: list[str]
    note: str | None = None


class DriftVerification(Verification):
    command: Literal["verify drift"] = "verify drift"
    gate: Literal["drift"] = "drift"
    exchanges: int = Field(0, description="chat exchanges re-sent")
    drifted: int = 0
    checked: int = 0
    couldNotCheck: int = 0
    details: list[DriftCheck] = Field(default_factory=list)


GATES: dict[str, type[Verification]] = {
    "tool-call": ToolCallVerification,
    "structured-output": StructuredOutputVerification,
    "cost": CostVerification,
    "resilience": ResilienceVerification,
    "report": ReportVerification,
    "drift": DriftVerification,
}


def verification(verdict: dict[str, JsonValue | Any]) -> Verification:
    """A verdict (`gates.Verdict.as_json`) as its gate's document: checked against it, so what is printed is
    what the schema says."""
    return GATES[str(verdict["gate"])].model_validate(verdict)
