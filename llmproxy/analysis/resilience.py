"""The faults llmproxy injected into a recorded run, what the client did after each and whether the run
recovered: the report's `resilience` section and `llmproxy verify resilience`.

It is the end-of-run summary's reading (intercept/aftermath.py) over the recorded calls, in order: a later
call asking the same thing as a faulted one (the same `shape`: path, model, tools, system, whole history)
is its retry, and the delay between their start times is how long the client waited.
"""

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from llmproxy.analysis.calls import Call
from llmproxy.analysis.report import InjectedFault, Resilience

if TYPE_CHECKING:  # loaded only when a call carries an injected fault
    from llmproxy.intercept.aftermath import Outcome


def outcomes(calls: Sequence[Call]) -> "list[tuple[int, Outcome]]":
    """Every injected fault with what followed it, as (the 1-based index of its call, the outcome)."""
    if not any(call.injected for call in calls):  # most runs: nothing to follow, and no call to watch
        return []
    from llmproxy.intercept.aftermath import Aftermath

    aftermath = Aftermath()
    faulted = []
    for index, call in enumerate(calls, 1):
        attempt = aftermath.seen(call.shape.encode(), call.started_at.timestamp())
        request = f"call {index} ({call.url})"
        faulted += [(index, aftermath.faulted(attempt, fault, request)) for fault in call.injected]
    aftermath.outcomes  # noqa: B018  (settles the retries that were answered)
    return faulted


def resilience(calls: Sequence[Call]) -> Resilience | None:
    """The report's section; None when nothing was injected into these calls."""
    found = outcomes(calls)
    if not found:
        return None
    from llmproxy.intercept.aftermath import Next, verdict

    counts = Counter(outcome.fault.kind.value for _, outcome in found)
    return Resilience(
        injected=dict(sorted(counts.items())),
        faults=[InjectedFault(call=index, **outcome.as_json()) for index, outcome in found],
        recovered=all(outcome.next is not Next.GAVE_UP for _, outcome in found),
        verdict=verdict([outcome for _, outcome in found]),
    )
