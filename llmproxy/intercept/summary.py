"""The intercept's part of the end-of-run summary: every injected fault counted by kind, what the client did
after each (retried, after how long, honouring retry-after or not; carried on; gave up), whether the run
recovered, and what the budget saw."""

from typing import TYPE_CHECKING, Final

from llmproxy.intercept.aftermath import verdict
from llmproxy.intercept.engine import Intercept
from llmproxy.words import plural

if TYPE_CHECKING:  # pricing is imported only when a budget needs it
    from llmproxy.intercept.budget import Spend

LISTED: Final = 20  # faults described one by one; beyond that, counted


def summary_lines(intercept: Intercept, standing: "Spend | None" = None) -> list[str]:
    """`standing`: the budget's, when it was read before its store was let go (else it is read now)."""
    lines = []
    injected = sum(intercept.injected.values())
    if injected:
        kinds = ", ".join(f"{kind.value} {count}" for kind, count in sorted(intercept.injected.items()))
        lines.append(f"injected {plural(injected, 'fault')} ({kinds}), seed {intercept.seed}")
        outcomes = intercept.aftermath.outcomes
        lines += [f"  {outcome.describe()}" for outcome in outcomes[:LISTED]]
        if len(outcomes) > LISTED:
            lines.append(f"  … and {len(outcomes) - LISTED} more")
        lines.append(verdict(outcomes))
    elif intercept.active:
        lines.append(f"injected no faults (seed {intercept.seed})")
    if intercept.budget is not None:
        lines.append(f"budget: {(standing or intercept.budget.standing()).describe()}")
        for reason, count in sorted(intercept.budget.unpriced_reasons.items()):
            lines.append(f"  unpriced: {plural(count, 'call')}: {reason}")
    return lines
