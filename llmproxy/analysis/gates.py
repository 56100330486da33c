"""`llmproxy verify`: CI gates over recorded calls. Each gate returns a `Verdict`: pass, fail (with one line
per reason), or could-not-check (exit 2) when there was nothing it could honestly judge — a gate never
passes on an absence of evidence.
"""

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import IntEnum
from typing import Any, Protocol

import orjson
from jsonschema import validators
from jsonschema.exceptions import SchemaError

from llmproxy.analysis.calls import RecordedCall, ToolUse
from llmproxy.analysis.coverage import Coverage
from llmproxy.analysis.figures import dollars, grade_change, money, percent
from llmproxy.analysis.report import Report
from llmproxy.analysis.resilience import outcomes
from llmproxy.analysis.verdict import Failures, failure
from llmproxy.cassette import jsonpath
from llmproxy.intercept.aftermath import Next
from llmproxy.intercept.faults import FaultKind
from llmproxy.model import Provider, Usage
from llmproxy.pricing import PriceBook, Priced, Unpriced
from llmproxy.words import plural


class GateOutcome(IntEnum):
    """The exit status: 0 pass, 1 fail, 2 could not check."""

    PASS = 0
    FAIL = 1
    COULD_NOT_CHECK = 2


@dataclass(slots=True)
class Verdict:
    gate: str
    outcome: GateOutcome
    reasons: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    note: str = ""  # said after "passed": what it passed on, when that was not every call
    summary: str = ""  # what the gate found, with its figures: a pass says what it passed on

    def as_json(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "outcome": self.outcome.name.lower(),
            "passed": self.outcome is GateOutcome.PASS,
            "reasons": self.reasons,
            "summary": self.summary,
            "note": self.note or None,
            **self.details,
        }

    def passed_line(self) -> str:
        """What the text says of a pass: `passed: estimated cost $0.0030 of 2 calls, within --max-usd $0.40`."""
        return "passed" + (f" {self.note}" if self.note else "") + (f": {self.summary}" if self.summary else "")


def covered(verdict: Verdict, coverage: Coverage, allow_partial: bool) -> Verdict:
    """The verdict of a gate that saw `coverage` of the calls it was asked about. One that did not see every
    call (`--max-calls` left some out, an exchange could not be decoded) fails, unless `allow_partial`: a pass
    on part of a run says nothing about the rest. Nothing it saw is ever `authoritative` for the whole."""
    details = {**verdict.details, "coverage": coverage.as_json()}
    if "authoritative" in details:
        details["authoritative"] = details["authoritative"] and coverage.complete
    summary = verdict.summary
    if coverage.complete:
        return Verdict(verdict.gate, verdict.outcome, verdict.reasons, details, summary=summary)
    if allow_partial:
        return Verdict(verdict.gate, verdict.outcome, verdict.reasons, details, coverage.partial_pass(), summary)
    outcome = GateOutcome.FAIL if verdict.outcome is GateOutcome.PASS else verdict.outcome
    return Verdict(verdict.gate, outcome, verdict.reasons + coverage.gate_gaps(), details, summary=summary)


class Answered(Protocol):
    """What the tool-call and cost gates read of a call: a report's `RecordedCall`, or a journal's read for them
    alone (`answered.AnsweredCall`)."""

    @property
    def exchange_id(self) -> int: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def provider(self) -> Provider: ...
    @property
    def vendor(self) -> str | None: ...
    @property
    def url(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def status(self) -> int | None: ...
    @property
    def failed(self) -> bool: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def cost(self) -> Priced | Unpriced: ...
    @property
    def tool_calls(self) -> tuple[ToolUse, ...]: ...


def _unanswered(calls: Sequence[Answered]) -> str | None:
    """When no call was answered, why (a run that failed says nothing a gate on its answers or its cost could
    pass on): "none of the 3 calls was answered (3 with status 529)"; None when one was."""
    if not calls or any(not call.failed for call in calls):
        return None
    which = "the only call was not answered" if len(calls) == 1 else f"none of the {len(calls):,} calls was answered"
    return f"{which} ({Failures(Counter(failure(call.status) for call in calls if call.failed)).how()})"


def _judge(gate: str, reasons: list[str], details: dict[str, Any], summary: str) -> Verdict:
    return Verdict(gate, GateOutcome.FAIL if reasons else GateOutcome.PASS, reasons, details, summary=summary)


def tool_call(
    calls: Sequence[Answered],
    name: str,
    args_regex: str | None,
    at_least: int,
    at_most: int | None,
    arguments: Any = None,
) -> Verdict:
    """The model asked for tool `name` (with arguments matching `args_regex`, searched in their compact JSON,
    and holding `arguments`, a JSON predicate: see `holds`) between `at_least` and `at_most` times across the
    recorded answers."""
    pattern = re.compile(args_regex) if args_regex is not None else None
    matched = [
        {"call": index, "id": use.id, "arguments": use.arguments}
        for index, call in enumerate(calls, 1)
        for use in call.tool_calls
        if use.name == name
        and (pattern is None or pattern.search(use.arguments))
        and (arguments is None or _holds_arguments(arguments, use.arguments))
    ]
    details = {"name": name, "count": len(matched), "matches": matched}
    what = f"{name}" + (f" with arguments matching /{args_regex}/" if args_regex else "")
    if arguments is not None:
        what += f"{' and' if args_regex else ' with arguments'} holding {orjson.dumps(arguments).decode()}"
    limits = f"--at-least {at_least}" + (f", --at-most {at_most}" if at_most is not None else "")
    summary = f"{what} was called {plural(len(matched), 'time')} in {plural(len(calls), 'call')} ({limits})"
    if not calls:
        return Verdict(
            "tool-call", GateOutcome.COULD_NOT_CHECK, ["no chat calls were recorded"], details, summary=summary
        )
    if (unanswered := _unanswered(calls)) is not None:
        why = f"{unanswered}: no answer could call {name}"
        return Verdict("tool-call", GateOutcome.COULD_NOT_CHECK, [why], details, summary=summary)
    reasons = []
    if len(matched) < at_least:
        reasons.append(f"{what} was called {plural(len(matched), 'time')}, fewer than --at-least {at_least}")
    if at_most is not None and len(matched) > at_most:
        reasons.append(f"{what} was called {plural(len(matched), 'time')}, more than --at-most {at_most}")
    return _judge("tool-call", reasons, details, summary)


def holds(expected: Any, actual: Any) -> bool:
    """Whether JSON `actual` holds to `expected`: an object holds when each of `expected`'s members holds in it
    (other members may be there too), anything else when it is equal."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and holds(value, actual[key]) for key, value in expected.items()
        )
    return bool(expected == actual) and isinstance(expected, bool) is isinstance(actual, bool)  # 1 is not true


def _holds_arguments(expected: Any, arguments: str) -> bool:
    try:
        return holds(expected, orjson.loads(arguments))
    except orjson.JSONDecodeError:  # arguments a model sent that are not JSON hold to no predicate
        return False


def structured_output(calls: Sequence[RecordedCall], schema: Any) -> Verdict:
    """Each recorded answer with text is JSON that meets `schema` (its `$schema` draft, else 2020-12).
    Answers without text (tool calls only, failures) are skipped and counted."""
    try:
        validator_class = validators.validator_for(schema)
        validator_class.check_schema(schema)
    except SchemaError as exc:
        why = f"the schema is not valid: {exc.message}"
        return Verdict("structured-output", GateOutcome.COULD_NOT_CHECK, [why], summary="no answer was checked")
    validator = validator_class(schema)
    results: list[dict[str, Any]] = []
    reasons: list[str] = []
    skipped = 0
    for index, call in enumerate(calls, 1):
        if not call.output_text.strip():
            skipped += 1
            continue
        try:
            document = orjson.loads(call.output_text)
        except orjson.JSONDecodeError:
            reasons.append(f"call {index}: the answer is not JSON")
            results.append({"call": index, "conforms": False, "error": "not JSON"})
            continue
        error = next(iter(sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))), None)
        if error is not None:
            where = jsonpath.render(tuple(error.absolute_path))
            reasons.append(f"call {index}: {where}: {error.message}")
        results.append({"call": index, "conforms": error is None, **({"error": error.message} if error else {})})
    details = {
        "checked": len(results),
        "conforming": sum(1 for result in results if result["conforms"]),
        "skippedNoOutput": skipped,
        "results": results,
    }
    summary = (
        f"{details['conforming']} of {plural(len(results), 'answer')} with text meet the schema"
        f" ({skipped} without text skipped)"
    )
    if not results:
        nothing = ["no recorded answer has text to check"]
        return Verdict("structured-output", GateOutcome.COULD_NOT_CHECK, nothing, details, summary=summary)
    return _judge("structured-output", reasons, details, summary)


def cost(
    calls: Sequence[Answered], book: PriceBook, max_usd: Decimal, model: str | None, allow_unpriced: bool
) -> Verdict:
    """The calls' estimated cost is at most `max_usd`. `model` prices every call as that model. An unpriced
    call fails the gate (the total would understate the cost) unless `allow_unpriced`."""
    total = Decimal(0)
    unpriced: list[str] = []
    for index, call in enumerate(calls, 1):
        price = call.cost
        if model is not None:
            price = book.cost(
                call.usage, model, at=call.started_at, vendor=call.vendor, url=call.url, provider=call.provider
            )
        if isinstance(price, Priced):
            total += price.usd
        else:
            unpriced.append(f"call {index} ({call.model or 'unknown model'}): {price.reason}")
    details = {
        "checked": len(calls),
        "unpriced": len(unpriced),
        "totalCostUsd": money(total),
        "maxCostUsd": money(max_usd),
        "authoritative": bool(calls) and not unpriced,
    }
    unpriced_note = f", {len(unpriced)} unpriced (not in the total)" if unpriced else ""
    relation = "above" if total > max_usd else "within"
    summary = (
        f"estimated cost {dollars(total)} of {plural(len(calls), 'call')}{unpriced_note},"
        f" {relation} --max-usd {dollars(max_usd)}"
    )
    if not calls:
        return Verdict("cost", GateOutcome.COULD_NOT_CHECK, ["no chat calls were recorded"], details, summary=summary)
    if (unanswered := _unanswered(calls)) is not None:
        why = f"{unanswered}: a cost of {dollars(total)} says nothing about the budget"
        return Verdict("cost", GateOutcome.COULD_NOT_CHECK, [why], details, summary=summary)
    reasons = []
    if total > max_usd:
        reasons.append(f"estimated cost {dollars(total)} is above --max-usd {dollars(max_usd)}")
    if unpriced and not allow_unpriced:
        reasons += [f"unpriced: {line} (--allow-unpriced to accept, --prices to price it)" for line in unpriced]
    return _judge("cost", reasons, details, summary)


_RETRYABLE = frozenset(kind for kind in FaultKind if kind.refuses and kind is not FaultKind.BUDGET)


def resilience(calls: Sequence[RecordedCall], require_retry: bool, honour_retry_after: bool) -> Verdict:
    """The client got past every fault llmproxy injected into the run: a successful answer came after each (each
    file judged on its own). `require_retry`: it retried every request refused by an error, a quota or a
    dropped connection rather than carrying on without the answer; `honour_retry_after`: no retry came sooner
    than the retry-after it was sent."""
    found = outcomes(calls)
    several = len({call.source for call in calls}) > 1
    reasons = []
    for index, outcome in found:
        fault = outcome.fault
        where = f" ({calls[index - 1].source})" if several else ""
        what = f"call {index}{where}: {fault.describe()}"
        if not outcome.recovered and outcome.last:  # the last fault its request met, and no answer after it
            after = "; no answer came after it" if outcome.next is Next.RETRIED else ""
            reasons.append(f"{what}: {outcome.followed()}{after}")
        elif require_retry and outcome.next is Next.CARRIED_ON and fault.kind in _RETRYABLE:
            reasons.append(f"{what}: not retried, the client carried on without the answer (--require-retry)")
        if honour_retry_after and outcome.honoured is False:
            reasons.append(f"{what}: {outcome.followed()} (--honour-retry-after)")
    injected = dict(sorted(Counter(outcome.fault.kind.value for _, outcome in found).items()))
    details = {"injected": injected, "faults": [{"call": index, **outcome.as_json()} for index, outcome in found]}
    kinds = ", ".join(f"{kind} {count}" for kind, count in injected.items())
    recovered = sum(outcome.recovered for _, outcome in found)
    summary = f"{recovered} of {plural(len(found), 'injected fault')} recovered from" + (f" ({kinds})" if kinds else "")
    if not calls:
        why = ["no chat calls were recorded"]
        return Verdict("resilience", GateOutcome.COULD_NOT_CHECK, why, details, summary=summary)
    if not found:
        nothing = "no fault was injected into these calls: record or replay them with --chaos, --fail or --rpm"
        return Verdict("resilience", GateOutcome.COULD_NOT_CHECK, [nothing], details, summary=summary)
    return _judge("resilience", reasons, details, summary)


def report_regression(
    current: Report,
    baseline: Report,
    max_grade_drop: int | None,
    max_cost_increase: float | None,
    min_cache_hit: float | None,
) -> Verdict:
    """The run has not regressed against the baseline report beyond the limits given."""
    comparison = current.baseline
    assert comparison is not None
    reasons = []
    if max_grade_drop is not None and comparison.gradeDrop > max_grade_drop:
        reasons.append(
            f"grade fell from {comparison.previousGrade} to {comparison.grade} "
            f"({grade_change(comparison.gradeDrop)}; --max-grade-drop {max_grade_drop})"
        )
    if max_cost_increase is not None:
        old, new = Decimal(baseline.totals.estimatedCostUsd), Decimal(current.totals.estimatedCostUsd)
        if (old == 0 and new > 0) or (old > 0 and float((new - old) / old) > max_cost_increase):
            rise = f"+{float((new - old) / old):.0%}" if old > 0 else "from nothing"
            reasons.append(
                f"estimated cost rose {rise} ({dollars(old)} → {dollars(new)}; "
                f"--max-cost-increase {max_cost_increase:.0%})"
            )
    if min_cache_hit is not None and current.totals.cacheHitRatio < min_cache_hit:
        reasons.append(
            f"cache-hit ratio {percent(current.totals.cacheHitRatio)} is below --min-cache-hit {min_cache_hit:g}"
        )
    failed, before = current.totals.failedCallCount, baseline.totals.failedCallCount
    if failed > before:
        reasons.append(
            f"{failed:,} of {plural(current.totals.callCount, 'call')} failed; "
            f"the baseline had {plural(before, 'failed call')}"
        )
    new_signals = [s.id for s in comparison.signals if s.status == "new"]
    details = {"grade": comparison.grade, "previousGrade": comparison.previousGrade, "newSignals": new_signals}
    old, new = Decimal(baseline.totals.estimatedCostUsd), Decimal(current.totals.estimatedCostUsd)
    summary = (
        f"grade {comparison.grade} (baseline {comparison.previousGrade}), estimated cost {dollars(new)}"
        f" (baseline {dollars(old)}), cache-hit ratio {percent(current.totals.cacheHitRatio)},"
        f" {plural(len(new_signals), 'new signal')}"
    )
    if current.totals.callCount == 0:
        why = ["no chat calls were recorded"]
        return Verdict("report", GateOutcome.COULD_NOT_CHECK, why, details, summary=summary)
    return _judge("report", reasons, details, summary)
