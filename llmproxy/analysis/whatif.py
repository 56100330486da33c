"""What-if over a recorded run: at which call a budget or a quota would have tripped, and what the agent went on
to do after it — offline, from the cassette alone (`llmproxy replay --what-if --budget-usd X`, `--tpm N`,
`--rpm N --instant`).

The recorded calls are put through the same `Intercept` that guards a live run, its clock set to each call's
recorded start (or, `instant`, to the run's start for every call: as a replay at instant timing sends them),
and each answer's recorded usage charged as it would have been. A refused call is not charged: the run
the limits would have allowed is what is simulated.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from llmproxy.analysis.calls import RecordedCall
from llmproxy.intercept.decision import Refusal, Through
from llmproxy.intercept.engine import Intercept
from llmproxy.intercept.faults import Injected
from llmproxy.intercept.rules import ChaosFile
from llmproxy.intercept.store import MemoryStore
from llmproxy.model import Conversation, Route
from llmproxy.pricing import PriceBook, Priced
from llmproxy.providers.routes import detect


@dataclass(frozen=True, slots=True)
class Trip:
    index: int  # 1-based among the run's calls
    call: RecordedCall
    fault: Injected
    elapsed: float  # seconds into the run


@dataclass(slots=True)
class WhatIf:
    calls: Sequence[RecordedCall]
    instant: bool
    trips: list[Trip] = field(default_factory=list)

    @property
    def first(self) -> Trip | None:
        return self.trips[0] if self.trips else None

    def lines(self) -> list[str]:
        timing = "all at once (--instant)" if self.instant else "at their recorded times"
        head = f"what-if over {len(self.calls)} recorded calls, {timing}:"
        if not self.trips:
            return [head, "  no limit would have tripped: every call would have been answered"]
        lines = [head]
        groups: dict[str, list[Trip]] = {}
        for trip in self.trips:
            groups.setdefault(trip.fault.rule, []).append(trip)
        for rule, trips in groups.items():
            first = trips[0]
            many = (
                f"{len(trips)} of {len(self.calls)} calls would have been refused, the first" if len(trips) > 1 else ""
            )
            lines.append(
                f"  {rule}: {many or 'refused'} at call {first.index} of {len(self.calls)} "
                f"({_where(first.call)}), {first.elapsed:.1f} s into the run: {first.fault.detail}"
            )
            lines.append(f"    {_saved(trips)}; {self._next(first.index)}")
        return lines

    def _next(self, index: int) -> str:
        """What the recorded run did after call `index`."""
        after = self.calls[index:]
        if not after:
            return f"call {index} was the recorded agent's last"
        same = after[0].shape == self.calls[index - 1].shape
        nxt = "sent the same request again (a retry)" if same else "went on to its next request"
        plural = "s" if len(after) > 1 else ""
        return f"after call {index} the recorded agent {nxt}, and made {len(after)} more call{plural}"


def _saved(trips: list[Trip]) -> str:
    """What the refused calls cost in the recording: what the limit would have kept from being spent."""
    calls = [trip.call for trip in trips]
    tokens = sum(call.usage.input_tokens + call.usage.output_tokens for call in calls)
    usd = sum((call.cost.usd for call in calls if isinstance(call.cost, Priced)), Decimal(0))
    unpriced = sum(1 for call in calls if not isinstance(call.cost, Priced))
    also = f", {unpriced} unpriced" if unpriced else ""
    plural = "s" if len(calls) > 1 else ""
    return f"the refused call{plural} used {tokens:,} tokens, ${usd:.4f}{also} in the recording"


def what_if(
    calls: Sequence[RecordedCall], chaos: ChaosFile, *, instant: bool = False, book: PriceBook | None = None
) -> WhatIf:
    """The recorded `calls` (in the order they were made) under `chaos`'s quotas, budget and faults."""
    result = WhatIf(calls, instant)
    if not calls:
        return result
    start = calls[0].started_at.timestamp()
    clock = _Clock(start)
    intercept = Intercept(chaos, MemoryStore(), clock=clock, book=book, quiet=True)
    for index, call in enumerate(calls, 1):
        clock.now = start if instant else call.started_at.timestamp()
        request = _Recorded(call)
        decision = intercept.decide(request)
        if isinstance(decision, Refusal):
            result.trips.append(Trip(index, call, decision.fault, clock.now - start))
        elif isinstance(decision, Through):
            intercept.settle(decision, call.usage, call.model, request.route, call.url, call.vendor)
    return result


def _where(call: RecordedCall) -> str:
    return f"exchange {call.exchange_id} in {call.source}"


class _Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class _Recorded:
    """A recorded call as the intercept reads a request."""

    def __init__(self, call: RecordedCall) -> None:
        self.host = call.host
        self.port = 443
        self.path = call.path
        self.model = call.model
        self.headers: Mapping[str, str] = {}
        self.conversation: Conversation | None = None
        self.route: Route | None = detect(call.host, call.path)
