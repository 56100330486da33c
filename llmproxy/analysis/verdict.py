"""The headline: how much of the run's spend the findings could recover, as a grade — and, beside it, whether
the run worked: a grade says what could be saved, so a run whose calls failed says so in the same breath.

Per-call MAX attribution (MockServer's): each finding's saving and wasted tokens are shared equally among
the calls it affects; each call counts only its largest share across findings, so overlapping findings
(a repeated system prompt *and* a low cache hit rate, about the same tokens) never add up to more than was
spent; the total is clamped to the spend. When nothing could be priced, the fraction is of input tokens.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.figures import dollars, money, percent, ratio
from llmproxy.analysis.report import Resilience, Totals, Verdict
from llmproxy.analysis.signals import SignalFinding
from llmproxy.words import plural

_GRADES = ((90, "A"), (75, "B"), (60, "C"), (45, "D"))
_ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class Failures:
    """The failed calls by what they got ("status 529", "no response"), and how many of them the client asked
    again later in its session (the same request: path, model, tools, system and whole history)."""

    by_what: Counter[str] = field(default_factory=Counter)
    asked_again: int = 0

    @classmethod
    def of(cls, calls: Sequence[RecordedCall]) -> "Failures":
        by_what: Counter[str] = Counter()
        asked_again = 0
        later: set[tuple[str, str]] = set()
        for call in reversed(calls):
            if call.failed:
                by_what[failure(call.status)] += 1
                asked_again += (call.session, call.shape) in later
            later.add((call.session, call.shape))
        return cls(by_what, asked_again)

    def how(self) -> str:
        """ "2 with status 500, 1 with no response" """
        return ", ".join(f"{count:,} with {what}" for what, count in sorted(self.by_what.items(), key=_most_first))


def failure(status: int | None) -> str:
    """What a failed call got, as `Failures` counts it: "status 529", "no response"."""
    return f"status {status}" if status is not None else "no response"


def verdict(
    findings: Sequence[SignalFinding],
    totals: Totals,
    spend: Decimal,
    failures: Failures = Failures(),
    resilience: Resilience | None = None,
) -> Verdict:
    """`resilience`: the faults llmproxy injected and what the client did (analysis/resilience.py judges;
    the verdict repeats what it says)."""
    usd: dict[int, Decimal] = {}
    wasted: dict[int, Decimal] = {}
    for finding in findings:
        share = len(finding.affected)
        saved = finding.saving / share if finding.saving is not None else None
        lost = Decimal(finding.wasted_input_tokens) / share if finding.wasted_input_tokens is not None else None
        for index in finding.affected:
            if saved is not None:
                usd[index] = max(usd.get(index, _ZERO), saved)
            if lost is not None:
                wasted[index] = max(wasted.get(index, _ZERO), lost)
    saving = min(sum(usd.values(), _ZERO), spend)
    wasted_tokens = int(sum(wasted.values(), _ZERO))
    if spend > 0:
        fraction = float(saving / spend)
    else:  # nothing priced: the share of input tokens the findings would save
        fraction = min(1.0, wasted_tokens / totals.inputTokens) if totals.inputTokens else 0.0
    score = 100 * (1 - fraction)
    grade = next((letter for floor, letter in _GRADES if score >= floor), "F")
    counts = {level: sum(1 for f in findings if f.severity == level) for level in ("HIGH", "MEDIUM", "LOW")}
    if grade == "A" and counts["HIGH"]:
        grade = "B"  # a high-severity finding is never an A
    health = reliability(totals, failures, resilience)
    failed_all = totals.callCount > 0 and totals.failedCallCount == totals.callCount
    rationale = _rationale(grade, findings, counts, fraction, saving, wasted_tokens, spend > 0, failed_all)
    return Verdict(
        grade=grade,  # type: ignore[arg-type]
        rationale=f"{rationale} {health}" if health else rationale,
        totalEstimatedSavingUsd=money(saving),
        totalWastedInputTokens=wasted_tokens,
        savingFractionOfSpend=ratio(fraction),
        costIsEstimated=totals.costIsEstimated,
        highCount=counts["HIGH"],
        mediumCount=counts["MEDIUM"],
        lowCount=counts["LOW"],
        reliability=health,
    )


def reliability(totals: Totals, failures: Failures, resilience: Resilience | None) -> str | None:
    """Failed calls and injected faults in a sentence; None when no call failed and nothing was injected.
    "3 of 3 calls failed (3 with status 529); the client asked again after 2 of them; llmproxy injected 3
    faults (error 3): the run did not recover: …" """
    if not totals.failedCallCount and resilience is None:
        return None
    parts = []
    if totals.failedCallCount:
        parts.append(f"{totals.failedCallCount:,} of {plural(totals.callCount, 'call')} failed ({failures.how()})")
        if failures.asked_again:
            them = "it" if totals.failedCallCount == 1 else f"{failures.asked_again:,} of them"
            parts.append(f"the client asked again after {them}")
    if resilience is not None:
        injected = len(resilience.faults)
        parts.append(f"llmproxy injected {plural(injected, 'fault')} ({resilience.counted()}): {resilience.verdict}")
    return "; ".join(parts) + "."


def _most_first(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def _rationale(
    grade: str,
    findings: Sequence[SignalFinding],
    counts: dict[str, int],
    fraction: float,
    saving: Decimal,
    wasted: int,
    priced: bool,
    failed_all: bool,
) -> str:
    if not findings:
        return (
            "No call was answered, so there was nothing to optimise."
            if failed_all
            else "No optimisation opportunities detected."
        )
    what = (
        f"{percent(fraction)} of spend ({dollars(saving)})"
        if priced
        else f"{percent(fraction)} of input tokens ({wasted:,})"
    )
    levels = ", ".join(f"{count} {level.lower()}" for level, count in counts.items() if count)
    plural = "s" if len(findings) != 1 else ""
    return f"Grade {grade} — an estimated {what} is recoverable across {len(findings)} finding{plural} ({levels})."
