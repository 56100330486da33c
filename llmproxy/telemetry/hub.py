"""A run's telemetry: what the meter tap hands it for each call goes to the run's registry of metrics (read by
`/metrics` and by the OTLP export alike) and to the OTLP export's queue, whichever the run has. On the
request's path it only reads the request's facts (`conventions.facts_of`) and adds to the registry; spans are
made and sent on the export's own thread.

A recording replayed again and again to the same request is the same call every time but for its time, its
number and its trace: what telemetry makes of it (its facts, its registry shape, its span but the ids and
times: `Served`) is made the first time and kept with the recorded reply, so serving it again is a look-up,
a count and an append.

The gauges are read as they stand whenever the metrics are (a scrape, an export): the budget and the quotas
from the intercept's own counters, the optimisation verdict from the latest report the control API built
(`reported`), as MockServer's gauges read its latest report — nothing is worked out a second time here.
"""

import secrets
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Final

from llmproxy.cassette.redact import Redactor
from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Reply
from llmproxy.meter import Call
from llmproxy.model import Completion
from llmproxy.telemetry.conventions import facts_of, metric_facts
from llmproxy.telemetry.metrics import (
    BUDGET_LIMIT,
    BUDGET_SPENT,
    BUDGET_UNPRICED,
    CACHE_HIT_RATIO,
    DROPPED_SPANS,
    FINDINGS,
    ONE_SHOT_RATE,
    QUOTA_LIMIT,
    QUOTA_RESET,
    QUOTA_USED,
    SAVING,
    SAVING_FRACTION,
    Gauge,
    Registry,
)
from llmproxy.telemetry.otlp import OtlpExport
from llmproxy.telemetry.served import Served
from llmproxy.telemetry.settings import TelemetryPlan

SERVED: Final = 1024  # recorded replies whose telemetry is kept (`Served`); past that, start again

if TYPE_CHECKING:
    from llmproxy.analysis.report import Report
    from llmproxy.intercept.engine import Intercept


class Telemetry:
    """`intercept`: how to find the run's intercept, for the budget's and the quotas' gauges (None: none)."""

    def __init__(
        self, plan: TelemetryPlan, redactor: Redactor, intercept: Callable[[], "Intercept | None"] = lambda: None
    ) -> None:
        self.plan = plan
        self._intercept = intercept
        self._content = redactor if plan.content else None
        self._verdict: tuple[Gauge, ...] = ()
        self.run = (("llmproxy.run.id", secrets.token_hex(8)), *plan.run)
        self.registry = Registry(self.gauges)
        self._served: dict[int, Served] = {}
        self.export: OtlpExport | None = None
        if plan.export:
            self.export = OtlpExport(plan.endpoint, self.run, self.registry)

    def observe(
        self, call: Call, incoming: Incoming, completion: Completion | None, reply: Reply | None = None
    ) -> None:
        """The call's figures added to the registry, and the call queued for its span. The facts only the
        span reads are read only when a span will be made: not without an export, nor when its queue is full
        (a collector down), where the call is counted as dropped at once. `reply`: the stage's reply it was;
        one served again and again (`shared`) keeps what telemetry makes of it (`Served`)."""
        if reply is not None and reply.shared and self._content is None and incoming.route is not None:
            self._serve(call, incoming, completion, reply)
            return
        export = self.export
        if export is None or export.full:
            self.registry.record(call, metric_facts(incoming))
            if export is not None:
                export.drop()
            return
        facts = facts_of(incoming, completion, self._content)
        self.registry.record(call, facts)
        export.add(call, facts)

    def _serve(self, call: Call, incoming: Incoming, completion: Completion | None, reply: Reply) -> None:
        """`observe` of a recorded reply: what it adds found in what was kept of it for this request."""
        raw, route = incoming.raw, incoming.route
        assert route is not None
        injected = incoming.injected
        faults = tuple(fault.kind.value for fault in injected) if injected else ()
        request = (
            raw.body,
            raw.method,
            raw.host,
            raw.port,
            incoming.path,
            route.operation,
            route.provider,
            route.vendor,
            call.detail,
            incoming.test_id,
            faults,
        )
        served = self._served.get(id(reply))
        if served is None or served.reply is not reply or served.request != request:
            if len(self._served) >= SERVED:
                self._served.clear()
            facts = facts_of(incoming, completion)._replace(traceparent=None, tracestate=None)
            served = self._served[id(reply)] = Served(reply, request, facts)
        shape, cost = served.shape, call.cost_usd
        if shape is None or not shape.live or served.cost != cost or served.unpriced != call.unpriced:
            shape = served.shape = self.registry.shape(call, served.facts)
            served.cost, served.unpriced = cost, call.unpriced
        self.registry.record(call, served.facts, shape)
        export = self.export
        if export is None:
            return
        facts = served.facts
        traceparent = incoming.headers.get("traceparent")
        if traceparent is not None:
            facts = facts._replace(traceparent=traceparent, tracestate=incoming.headers.get("tracestate"))
        export.add(call, facts, False, served)  # a full queue drops it, counted

    def reported(self, report: "Report") -> None:
        """The latest optimisation report built over this run: its verdict's figures are the gauges' now."""
        verdict, totals = report.verdict, report.totals
        self._verdict = (
            (SAVING, float(Decimal(verdict.totalEstimatedSavingUsd)), ()),
            (SAVING_FRACTION, verdict.savingFractionOfSpend, ()),
            (CACHE_HIT_RATIO, totals.cacheHitRatio, ()),
            (ONE_SHOT_RATE, totals.oneShotRate, ()),
            (FINDINGS, verdict.highCount, (("llmproxy.finding.severity", "high"),)),
            (FINDINGS, verdict.mediumCount, (("llmproxy.finding.severity", "medium"),)),
            (FINDINGS, verdict.lowCount, (("llmproxy.finding.severity", "low"),)),
        )

    def gauges(self) -> list[Gauge]:
        found: list[Gauge] = []
        if self.export is not None:
            found.append((DROPPED_SPANS, self.export.dropped, ()))
        intercept = self._intercept()
        if intercept is not None and intercept.budget is not None:
            spend = intercept.budget.standing()
            found += [
                (BUDGET_SPENT, float(spend.spent), ()),
                (BUDGET_LIMIT, float(spend.limit), ()),
                (BUDGET_UNPRICED, spend.unpriced, ()),
            ]
        for name, standing in intercept.quota_standings() if intercept is not None else ():
            for unit, limit, count in standing.counts:
                labels = (("llmproxy.quota.name", name), ("llmproxy.quota.unit", unit.value))
                found += [
                    (QUOTA_USED, count.used, labels),
                    (QUOTA_LIMIT, limit, labels),
                    (QUOTA_RESET, count.reset_ms / 1000, labels),
                ]
        found += self._verdict
        return found

    def explain(self) -> str:
        return self.plan.describe()

    def close(self) -> None:
        if self.export is not None:
            self.export.close()
