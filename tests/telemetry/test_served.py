"""A recording served again and again: what telemetry keeps of it (`llmproxy.telemetry.served`) changes nothing
it sends — the same spans and the same figures as a call made afresh each time, whatever changes between
the serves (the request, its trace, the faults, the price)."""

from dataclasses import asdict
from decimal import Decimal
from typing import Any

from llmproxy.cassette.redact import Redactor
from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.chain.taps.meter import replied
from llmproxy.intercept.faults import FaultKind, Injected
from llmproxy.meter import Call
from llmproxy.model import Completion, StopReason, Usage
from llmproxy.telemetry.hub import Telemetry
from llmproxy.telemetry.settings import TelemetryPlan
from tests.telemetry.receiver import Received, receiver
from tests.telemetry.test_conventions import MESSAGES, request

TRACEPARENT = "00-" + "1" * 32 + "-" + "2" * 16 + "-01"
COMPLETION = Completion(
    id="msg_1",
    model="claude-haiku-4-5",
    text="Hi.",
    stop_reason=StopReason.END_TURN,
    usage=Usage(input_tokens=30, output_tokens=2),
)
REPLY = Reply(200, (("content-type", "application/json"),), b"{}", source=ReplySource.CASSETTE, shared=True)


def serves() -> list[tuple[Incoming, Call]]:
    """The same recording served to requests that differ, or not, in what telemetry reads, at two prices."""
    same = [request("api.anthropic.com", "/v1/messages", MESSAGES) for _ in range(3)]
    traced = request("api.anthropic.com", "/v1/messages", MESSAGES, {"traceparent": TRACEPARENT, "tracestate": "k=v"})
    warmer = request("api.anthropic.com", "/v1/messages", {**MESSAGES, "temperature": 0.9})
    faulted = request("api.anthropic.com", "/v1/messages", MESSAGES)
    faulted.injected.append(Injected(FaultKind.LATENCY, "--latency", "slowed"))
    again = request("api.anthropic.com", "/v1/messages", MESSAGES)
    cheap, dear = Decimal("0.0000375"), Decimal("0.00011")
    priced = [(same[0], cheap), (same[1], cheap), (traced, cheap), (warmer, cheap), (faulted, cheap)]
    priced += [(same[2], dear), (again, cheap)]
    return [(incoming, replied(incoming, REPLY, COMPLETION)._replace(cost_usd=cost)) for incoming, cost in priced]


def sent(served: list[tuple[Incoming, Call]], keep: bool) -> tuple[bytes, list[dict[str, Any]]]:
    """The registry's text and the spans a run sends of the calls `served` when its telemetry keeps what it
    makes of the recording (`keep`: the reply handed over), or not."""
    with receiver() as (url, received):
        telemetry = Telemetry(TelemetryPlan(export=True, endpoint=url), Redactor())
        for incoming, call in served:
            telemetry.observe(call, incoming, COMPLETION, REPLY if keep else None)
        telemetry.close()
        return telemetry.registry.exposition(), spans(received)


def spans(received: Received) -> list[dict[str, Any]]:
    """The spans but what is each run's or each span's own: the run's id, a trace the client did not give."""
    found = []
    for span in received.spans:
        given = asdict(span)
        given["attributes"].pop("llmproxy.run.id")
        if not span.parent_span_id:
            given.pop("trace_id")
        found.append(given)
    return found


def test_a_kept_recording_sends_what_a_call_made_afresh_sends() -> None:
    served = serves()
    kept_text, kept_spans = sent(served, keep=True)
    fresh_text, fresh_spans = sent(served, keep=False)
    assert len(kept_spans) == len(served)
    assert kept_spans == fresh_spans
    assert kept_text == fresh_text
    assert kept_spans[2]["trace_id"] == "1" * 32  # the traced request's own trace, not a kept one
    assert kept_spans[3]["attributes"]["gen_ai.request.temperature"] == 0.9  # another request: made afresh
    assert kept_spans[4]["attributes"]["llmproxy.fault.kinds"] == ("latency",)
    assert kept_spans[5]["attributes"]["llmproxy.cost.usd"] == 0.00011  # another price: made afresh
