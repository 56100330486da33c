"""Which requests a profile applies to, and the chaos file (`--chaos FILE`) with the command-line shorthands
that build the same thing (`--fail 529@0.3 --seed 7`, `--fail-first 2`, `--rpm 50`, `--tpm 40000`,
`--budget-usd 2.00`).

A rule without a `match` applies to every LLM API request (a coding CLI's telemetry and settings calls are
left alone); a rule that names a host or a path applies to any request there. docs/chaos.schema.json is
generated from `ChaosFile`.
"""

import re
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

import pydantic
from pydantic import BaseModel, ConfigDict, Field, field_validator

from llmproxy.errors import ChaosError, UsageError
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.json_files import read_json
from llmproxy.model import Route
from llmproxy.validation_errors import describe, message

MINUTE_MS: Final = 60_000
DAY_MS: Final = 86_400_000


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RuleMatch(_Spec):
    """Every field set must hold. `path` is exact, or a regular expression when it starts with ^."""

    host: str | None = Field(default=None, description="the request's host, without the port")
    provider: str | None = Field(default=None, description="anthropic, openai, gemini, bedrock, azure, ollama…")
    model: str | None = None
    path: str | None = None

    @field_validator("path")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None and value.startswith("^"):
            try:
                re.compile(value)
            except re.error as error:
                raise ValueError(f"not a regular expression: {error}") from error
        return value

    def holds(self, host: str, path: str, route: Route | None, model: str | None) -> bool:
        if self.host is None and self.path is None and route is None:
            return False  # not an LLM API request, and the rule does not name where it applies
        if self.host is not None and host.lower() != self.host.lower():
            return False
        if self.provider is not None and (route is None or route.provider.value != self.provider.lower()):
            return False
        if self.model is not None and model != self.model:
            return False
        if self.path is None:
            return True
        return re.search(self.path, path) is not None if self.path.startswith("^") else path == self.path


class Rule(_Spec):
    name: str | None = Field(default=None, description="how the summary and the debug log name it")
    match: RuleMatch = RuleMatch()
    chaos: ChaosProfile


class ChaosFile(_Spec):
    """`--chaos FILE`: rules in order (every matching rule's quotas count; the first fault that fires wins),
    the seed, and a USD budget over every answer."""

    seed: int | None = Field(default=None, description="for every rule without its own seed; unset: drawn per run")
    budgetUsd: Decimal | None = Field(default=None, gt=0, description="refuse LLM requests once this is spent")
    rules: tuple[Rule, ...] = ()


def load_chaos(path: Path) -> ChaosFile:
    """Raises ChaosError: ``chaos.json: $.rules[0].chaos.quotaLimit: …``."""
    return parse_chaos(read_json(path, "chaos file", ChaosError), str(path))


def parse_chaos(data: Any, where: str) -> ChaosFile:
    try:
        return ChaosFile.model_validate(data)
    except pydantic.ValidationError as error:
        raise ChaosError("\n".join(f"{where}: {problem}" for problem in describe(error, data))) from error


def parse_profile(data: Any, where: str) -> ChaosProfile:
    """One profile (a control API body's `chaos` at `where`="$.chaos", a header); raises ChaosError naming the
    JSON path of each problem under `where`."""
    try:
        return ChaosProfile.model_validate(data)
    except pydantic.ValidationError as error:
        raise ChaosError("; ".join(where + problem[1:] for problem in describe(error, data))) from error


def shorthand_rules(
    *,
    fail: str | Sequence[str] = (),
    fail_first: int | None = None,
    retry_after: str | None = None,
    rpm: int | None = None,
    tpm: int | None = None,
    tpd: int | None = None,
) -> tuple[Rule, ...]:
    """The rules the command-line shorthands stand for: one per `--fail` (the first also holds the quotas),
    each with --fail-first and --retry-after. Raises UsageError for a value it cannot read.

    Several `--fail`s are shares of all requests, in the order given: `--fail 500@0.3 --fail 429@0.05` answers
    30% with 500 and 5% with 429. Rules are tried in order and the first fault that fires wins, so each later
    rule draws among the requests the earlier ones let through, at its share of those (0.05 / 0.7)."""
    fails = [fail] if isinstance(fail, str) else list(fail)
    shared: dict[str, Any] = {}
    shared_names = []
    if fail_first is not None:
        shared["failRequestCount"] = fail_first
        shared_names.append(f"--fail-first {fail_first}")
    if retry_after is not None:
        shared["retryAfter"] = retry_after
        shared_names.append(f"--retry-after {retry_after}")
    quotas: dict[str, Any] = {}
    quota_names = []
    if rpm is not None:
        quotas.update(quotaName="cli", quotaLimit=rpm, quotaWindowMillis=MINUTE_MS)
        quota_names.append(f"--rpm {rpm}")
    if tpm is not None:
        quotas.update(quotaName="cli", tokenQuotaLimit=tpm, tokenQuotaWindowMillis=MINUTE_MS)
        quota_names.append(f"--tpm {tpm}")
    faults = _shares([(text, _fail(text)) for text in fails])
    if not faults and fail_first is not None:
        faults = [("", {"errorStatus": 529})]
    if not faults and (shared or quotas):
        faults = [("", {})]
    rules = []
    for number, (text, fields) in enumerate(faults):
        names = ([f"--fail {text}"] if text else []) + shared_names + (quota_names if number == 0 else [])
        rules.append(_rule(" ".join(names), {**fields, **shared, **(quotas if number == 0 else {})}))
    if tpd is not None:
        rules.append(
            _rule(f"--tpd {tpd}", {"quotaName": "cli-day", "tokenQuotaLimit": tpd, "tokenQuotaWindowMillis": DAY_MS})
        )
    return tuple(rules)


def _shares(fails: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """Each `--fail`'s probability as its share of the requests the earlier ones let through; one without a
    probability, last, takes all that are left. Raises UsageError for shares that cannot all be given."""
    given = " ".join(f"--fail {text}" for text, _ in fails)
    for text, fields in fails[:-1]:
        if "errorProbability" not in fields:
            raise UsageError(
                f"{given}: --fail {text} takes every request left: give it a share ({text}@0.5), or put it last"
            )
    asked = [fields.get("errorProbability") for _, fields in fails]
    if any(share is not None and not 0 <= share <= 1 for share in asked):
        return fails  # each rule says what is wrong with its own
    total = sum(share for share in asked if share is not None)
    if total > 1 + 1e-9:
        raise UsageError(f"{given}: the shares add up to {total:g} of the requests; at most 1")
    shared, left = [], 1.0
    for (text, fields), share in zip(fails, asked, strict=True):
        if share is not None and left < 1.0:
            fields = {**fields, "errorProbability": min(1.0, share / left) if left > 0 else 0.0}
        shared.append((text, fields))
        left -= share or 0.0
    return shared


def _fail(text: str) -> dict[str, Any]:
    """`529` or `529@0.3`: a status, and the probability of sending it."""
    status, at, probability = text.partition("@")
    try:
        fields: dict[str, Any] = {"errorStatus": int(status)}
        if at:
            fields["errorProbability"] = float(probability)
    except ValueError:
        raise UsageError(f"--fail {text!r}: expected STATUS or STATUS@PROBABILITY, e.g. 529@0.3") from None
    return fields


# The option a profile field of a shorthand rule comes from, to name it in an error.
_OPTION_OF = {
    "errorStatus": "--fail",
    "errorProbability": "--fail",
    "failRequestCount": "--fail-first",
    "retryAfter": "--retry-after",
    "quotaLimit": "--rpm",
    "tokenQuotaLimit": "--tpm",
}


def _rule(name: str, fields: dict[str, Any]) -> Rule:
    """The rule, or UsageError naming the option as given: ``--retry-after soon: 'soon' is neither…``."""
    try:
        return Rule(name=name, chaos=ChaosProfile.model_validate(fields))
    except pydantic.ValidationError as error:
        given = ["--" + part for part in name.removeprefix("--").split(" --")]
        problems = []
        for problem in error.errors():
            option = _OPTION_OF.get(str(problem["loc"][0]) if problem["loc"] else "", "")
            where = next((part for part in given if part.split()[0] == option), given[0])
            problems.append(f"{where}: {message(problem)}")
        raise UsageError("; ".join(problems)) from None
