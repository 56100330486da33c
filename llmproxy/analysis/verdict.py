"""The headline: how much of the run's spend the findings could recover, as a grade.

Per-call MAX attribution (MockServer's): each finding's saving and wasted tokens are shared equally among
the calls it affects; each call counts only its largest share across findings, so overlapping findings
(a repeated system prompt *and* a low cache hit rate, about the same tokens) never add up to more than was
spent; the total is clamped to the spend. When nothing could be priced, the fraction is of input tokens.
"""

from collections.abc import Sequence
from decimal import Decimal

from llmproxy.analysis.figures import dollars, money, percent, ratio
from llmproxy.analysis.report import Totals, Verdict
from llmproxy.analysis.signals import Finding

_GRADES = ((90, "A"), (75, "B"), (60, "C"), (45, "D"))
_ZERO = Decimal(0)


def verdict(findings: Sequence[Finding], totals: Totals, spend: Decimal) -> Verdict:
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
    return Verdict(
        grade=grade,  # type: ignore[arg-type]
        rationale=_rationale(grade, findings, counts, fraction, saving, wasted_tokens, spend > 0),
        totalEstimatedSavingUsd=money(saving),
        totalWastedInputTokens=wasted_tokens,
        savingFractionOfSpend=ratio(fraction),
        costIsEstimated=totals.costIsEstimated,
        highCount=counts["HIGH"],
        mediumCount=counts["MEDIUM"],
        lowCount=counts["LOW"],
    )


def _rationale(
    grade: str,
    findings: Sequence[Finding],
    counts: dict[str, int],
    fraction: float,
    saving: Decimal,
    wasted: int,
    priced: bool,
) -> str:
    if not findings:
        return "No optimisation opportunities detected."
    what = (
        f"{percent(fraction)} of spend ({dollars(saving)})"
        if priced
        else f"{percent(fraction)} of input tokens ({wasted:,})"
    )
    levels = ", ".join(f"{count} {level.lower()}" for level, count in counts.items() if count)
    plural = "s" if len(findings) != 1 else ""
    return f"Grade {grade} — an estimated {what} is recoverable across {len(findings)} finding{plural} ({levels})."
