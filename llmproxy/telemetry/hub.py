"""A run's telemetry: what the meter tap hands it for each call goes to the Prometheus registry (`/metrics`)
and to the OTLP export, whichever the run has. On the request's path it only reads the request's facts
(`conventions.facts_of`) and adds to the registry's counters; spans are made and sent on the export's own
thread."""

import secrets
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from llmproxy.cassette.redact import Redactor
from llmproxy.chain.incoming import Incoming
from llmproxy.meter import Call
from llmproxy.model import Completion
from llmproxy.telemetry.conventions import facts_of
from llmproxy.telemetry.metrics import BUDGET_LIMIT, BUDGET_SPENT, DROPPED_SPANS, Instrument, Registry, observations
from llmproxy.telemetry.settings import TelemetryPlan

if TYPE_CHECKING:  # the SDK is imported only when the run exports
    from llmproxy.intercept.budget import Budget
    from llmproxy.telemetry.otlp import OtlpExport


class Telemetry:
    """`budget`: how to find the run's budget, for its gauges (None: the run has none)."""

    def __init__(
        self, plan: TelemetryPlan, redactor: Redactor, budget: Callable[[], "Budget | None"] = lambda: None
    ) -> None:
        self.plan = plan
        self._budget = budget
        self._content = redactor if plan.content else None
        self.run = (("llmproxy.run.id", secrets.token_hex(8)), *plan.run)
        self.registry = Registry(self.gauges) if plan.metrics else None
        self.export: OtlpExport | None = None
        if plan.export:
            from llmproxy.telemetry import otlp

            self.export = otlp.OtlpExport(plan.endpoint, self.run, self.gauges)

    def observe(self, call: Call, incoming: Incoming, completion: Completion | None) -> None:
        facts = facts_of(incoming, completion, self._content)
        if self.registry is not None:
            for instrument, value, labels in observations(call, facts):
                self.registry.add(instrument, value, labels)
        if self.export is not None:
            self.export.add(call, facts)

    def gauges(self) -> Sequence[tuple[Instrument, float]]:
        found: list[tuple[Instrument, float]] = []
        if self.export is not None:
            found.append((DROPPED_SPANS, self.export.dropped))
        budget = self._budget()
        if budget is not None:
            standing = budget.standing()
            found += [(BUDGET_SPENT, float(standing.spent)), (BUDGET_LIMIT, float(standing.limit))]
        return found

    def metrics(self) -> bytes | None:
        """The Prometheus exposition; None when the run keeps no registry."""
        return self.registry.exposition() if self.registry is not None else None

    def explain(self) -> str:
        return self.plan.describe()

    def close(self) -> None:
        if self.export is not None:
            self.export.close()
