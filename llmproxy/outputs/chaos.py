"""`llmproxy chaos validate --json` and `llmproxy chaos show --json`."""

from typing import Any, Literal

from pydantic import Field

from llmproxy.intercept.rules import ChaosFile
from llmproxy.outputs import Document, Part


class RuleSummary(Part):
    name: str = Field(description="how the summary and the debug log name it")
    match: dict[str, str] = Field(description="what it selects (empty: every LLM API request)")
    chaos: dict[str, Any] = Field(description="the profile's fields that are set")


class ChaosValidation(Document):
    command: Literal["chaos validate"] = "chaos validate"
    file: str
    valid: bool = Field(description="the file can be used as it is (exit status 0)")
    errors: list[str] = Field(description="each problem, with the file and the JSON path of the field")
    seed: int | None = None
    budgetUsd: str | None = Field(default=None, description="the budget in US dollars, a decimal string")
    rules: list[RuleSummary] = Field(description="the file's rules in order; empty when it is not valid")


class ChaosState(Document):
    """What the control API of a running llmproxy holds."""

    command: Literal["chaos show"] = "chaos show"
    services: dict[str, dict[str, Any]] = Field(description="host → the profile set for it while running")
    ttlRemainingMillis: dict[str, int] = Field(default_factory=dict, description="host → milliseconds it has left")
    rules: list[dict[str, Any]] = Field(description="the rules of --chaos and the command line, in order")
    seed: int
    injected: dict[str, int] = Field(description="faults injected so far, by kind")
    budget: dict[str, Any] | None = Field(default=None, description="limitUsd, spentUsd, unpricedCalls")


def validation(file: str, loaded: ChaosFile) -> ChaosValidation:
    rules = [
        RuleSummary(
            name=rule.name or f"rule {number}",
            match=rule.match.model_dump(exclude_none=True),
            chaos=rule.chaos.model_dump(exclude_defaults=True, mode="json"),
        )
        for number, rule in enumerate(loaded.rules, 1)
    ]
    budget = str(loaded.budgetUsd) if loaded.budgetUsd is not None else None
    return ChaosValidation(file=file, valid=True, errors=[], seed=loaded.seed, budgetUsd=budget, rules=rules)


def invalid(file: str, message: str) -> ChaosValidation:
    return ChaosValidation(file=file, valid=False, errors=message.splitlines(), rules=[])
