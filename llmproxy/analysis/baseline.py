"""Reports compared: a run against a baseline report (`--baseline OLD.json`), for reviews and CI gates.

A signal is *new* when the baseline did not have its id, *resolved* when only the baseline had it, else
*unchanged* (its severity and saving may still have moved: both are shown). KPIs are compared as numbers;
money as exact decimals.
"""

from decimal import Decimal
from pathlib import Path

from pydantic import ValidationError

from llmproxy.analysis.figures import money, ratio
from llmproxy.analysis.report import Comparison, KpiDelta, Report, SignalChange
from llmproxy.cassette import jsonpath
from llmproxy.errors import LlmproxyError

GRADES = "ABCDF"


def read_baseline(path: Path) -> Report:
    """A report written by `llmproxy report --format json`. Raises LlmproxyError saying what is wrong."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LlmproxyError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return Report.model_validate_json(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = jsonpath.render(error["loc"])
        raise LlmproxyError(f"{path}: not an llmproxy report (schema v1): {where}: {error['msg']}") from None


def compare(current: Report, previous: Report, name: str) -> Comparison:
    before = {signal.id: signal for signal in previous.signals}
    after = {signal.id: signal for signal in current.signals}
    changes = []
    for signal_id in sorted(before.keys() | after.keys()):
        old, new = before.get(signal_id), after.get(signal_id)
        shown = new or old
        assert shown is not None
        changes.append(
            SignalChange(
                id=signal_id,
                status="new" if old is None else "resolved" if new is None else "unchanged",
                severity=shown.severity,
                previousSeverity=old.severity if old else None,
                estimatedSavingUsd=new.estimatedSavingUsd if new else None,
                previousEstimatedSavingUsd=old.estimatedSavingUsd if old else None,
            )
        )
    cost, old_cost = Decimal(current.totals.estimatedCostUsd), Decimal(previous.totals.estimatedCostUsd)
    kpis = [
        KpiDelta(name="estimatedCostUsd", previous=money(old_cost), current=money(cost), delta=money(cost - old_cost)),
        *(
            KpiDelta(name=name_, previous=old, current=new, delta=ratio(new - old))
            for name_, old, new in (
                ("cacheHitRatio", previous.totals.cacheHitRatio, current.totals.cacheHitRatio),
                ("oneShotRate", previous.totals.oneShotRate, current.totals.oneShotRate),
                (
                    "savingFractionOfSpend",
                    previous.verdict.savingFractionOfSpend,
                    current.verdict.savingFractionOfSpend,
                ),
            )
        ),
        *(
            KpiDelta(name=name_, previous=old_count, current=new_count, delta=new_count - old_count)
            for name_, old_count, new_count in (
                ("callCount", previous.totals.callCount, current.totals.callCount),
                ("inputTokens", previous.totals.inputTokens, current.totals.inputTokens),
                ("outputTokens", previous.totals.outputTokens, current.totals.outputTokens),
            )
        ),
    ]
    return Comparison(
        baseline=name,
        previousGrade=previous.verdict.grade,
        grade=current.verdict.grade,
        gradeDrop=GRADES.index(current.verdict.grade) - GRADES.index(previous.verdict.grade),
        costIncrease=ratio(float((cost - old_cost) / old_cost)) if old_cost > 0 else None,
        signals=changes,
        kpis=kpis,
    )
