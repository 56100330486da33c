"""The faults llmproxy injected into a recorded run, what the client did after each and whether the run
recovered: the report's `resilience` section and `llmproxy verify resilience`.

It is the end-of-run summary's reading (intercept/aftermath.py) over the recorded calls, in order, each file
(a cassette, a mock log) on its own: a file is one run, and a call of another run is never its retry. A later
call asking the same thing as a faulted one (the same `shape`: path, model, tools, system, whole history) is
its retry, and the delay between their start times is how long the client waited; a call's recorded status
(and whether it carried an error) is what the client got.
"""

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.report import InjectedFault, Resilience

if TYPE_CHECKING:  # loaded only when a call carries an injected fault
    from llmproxy.intercept.aftermath import Outcome


def outcomes(calls: Sequence[RecordedCall]) -> "list[tuple[int, Outcome]]":
    """Every injected fault with what followed it, as (the 1-based index of its call, the outcome)."""
    if not any(call.injected for call in calls):  # most runs: nothing to follow, and no call to watch
        return []
    from llmproxy.intercept.aftermath import Aftermath

    runs: dict[str, Aftermath] = {}
    faulted = []
    for index, call in enumerate(calls, 1):
        aftermath = runs.get(call.source) or runs.setdefault(call.source, Aftermath())
        attempt = aftermath.seen(call.shape.encode(), call.started_at.timestamp())
        request = f"call {index} ({call.url})"
        faulted += [(index, aftermath.faulted(attempt, fault, request)) for fault in call.injected]
        aftermath.answered(attempt, call.status or 0, ok=call.error is None and 200 <= (call.status or 0) < 300)
    for aftermath in runs.values():
        aftermath.outcomes  # noqa: B018  (settles what each run's faults came to)
    return faulted


def resilience(calls: Sequence[RecordedCall]) -> Resilience | None:
    """The report's section; None when nothing was injected into these calls."""
    found = outcomes(calls)
    if not found:
        return None
    from llmproxy.intercept.aftermath import verdict

    counts = Counter(outcome.fault.kind.value for _, outcome in found)
    return Resilience(
        injected=dict(sorted(counts.items())),
        faults=[InjectedFault(call=index, **outcome.as_json()) for index, outcome in found],
        recovered=all(outcome.recovered for _, outcome in found),
        verdict=verdict([outcome for _, outcome in found]),
    )
