"""The control API's verifies over the journal: how many requests held to a match, the order requests arrived
in, and the gates `llmproxy verify` runs on cassettes — a tool called, structured output, cost within a budget
— run on the journal's exchanges read as a cassette (`llmproxy.control.journal_calls`). A failing verify answers
with what it found instead (the closest requests, the counts, the tools that were called), never a bare false.

Requests are judged as the client sent them, with the expectations file's own predicates (one language for
answering and verifying); each entry's request is read no further than the predicates ask, once, and kept on it
(`Entry.asked`), so verifying again reparses nothing. The gates read the answers as a cassette would store them.
"""

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from llmproxy.analysis import gates
from llmproxy.analysis.answered import AnsweredCall
from llmproxy.analysis.build import Selection, select
from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.coverage import Coverage
from llmproxy.analysis.gates import GateOutcome, Verdict, covered
from llmproxy.cassette.store import gc_paused
from llmproxy.control.auth import Access
from llmproxy.control.journal_calls import Reader, kept_journal
from llmproxy.control.models import JournalScope, NearMiss, Verified, VerifyRequests
from llmproxy.control.router import ApiError, Call, Endpoint
from llmproxy.control.verify_models import (
    DriftVerified,
    GateVerified,
    SequenceVerified,
    ToolCallVerified,
    VerifyCost,
    VerifyDrift,
    VerifySequence,
    VerifyStructuredOutput,
    VerifyToolCall,
)
from llmproxy.errors import LlmproxyError
from llmproxy.journal import Entry, Journal, Query
from llmproxy.mock import spec
from llmproxy.mock.engine import failed_predicates
from llmproxy.mock.predicates import has_conversation_predicates
from llmproxy.proxy_session import Session

CLOSEST: Final = 3  # near misses a failing verify shows


def verify_endpoints(session: Session) -> list[Endpoint]:
    """The verifies over `session`'s journal (404 when it keeps none); each only reads."""
    reader = Reader()

    def verify_requests(call: Call[Any, Any, VerifyRequests]) -> Verified:
        assert call.body is not None  # the endpoint declares its body: the router always gives one
        with gc_paused():  # what a verify reads of each entry lives on with it: the collector's passes are waste
            return verified(kept_journal(session.journal), call.body)

    def verify_sequence(call: Call[Any, Any, VerifySequence]) -> SequenceVerified:
        assert call.body is not None
        with gc_paused():
            return sequenced(kept_journal(session.journal), call.body)

    def verify_tool_call(call: Call[Any, Any, VerifyToolCall]) -> ToolCallVerified:
        verify = call.body
        assert verify is not None
        calls, coverage = _answered(kept_journal(session.journal), verify, reader)
        low, high = verify.bounds()
        verdict = gates.tool_call(calls, verify.name, verify.args_regex, low, high, verify.arguments)
        judged = _judged(verdict, calls, coverage, verify.allow_partial)
        tools = Counter(use.name for judged_call in calls for use in judged_call.tool_calls)
        return ToolCallVerified(**dict(judged), tools_called=dict(sorted(tools.items())))

    def verify_structured_output(call: Call[Any, Any, VerifyStructuredOutput]) -> GateVerified:
        verify = call.body
        assert verify is not None
        calls, coverage = _calls(kept_journal(session.journal), verify, reader)
        return _judged(gates.structured_output(calls, verify.json_schema), calls, coverage, verify.allow_partial)

    def verify_cost(call: Call[Any, Any, VerifyCost]) -> GateVerified:
        verify = call.body
        assert verify is not None
        calls, coverage = _answered(kept_journal(session.journal), verify, reader, tool_calls=False)
        verdict = gates.cost(calls, reader.book, verify.max_usd, verify.price_as, verify.allow_unpriced)
        return _judged(verdict, calls, coverage, verify.allow_partial)

    def verify_drift(call: Call[Any, Any, VerifyDrift]) -> DriftVerified:
        verify = call.body
        assert verify is not None
        return drifted(verify)

    return [
        Endpoint(
            "POST",
            "/verify/requests",
            "Whether the journal holds as many requests as expected that hold to a match; what came near if not",
            verify_requests,
            Verified,
            Access.READ,
            body=VerifyRequests,
        ),
        Endpoint(
            "POST",
            "/verify/sequence",
            "Whether requests holding to each match arrived in that order; which step broke it and what came instead",
            verify_sequence,
            SequenceVerified,
            Access.READ,
            body=VerifySequence,
        ),
        Endpoint(
            "POST",
            "/verify/tool-call",
            "Whether the model called a tool (by name, arguments) as often as expected; every tool called if not",
            verify_tool_call,
            ToolCallVerified,
            Access.READ,
            body=VerifyToolCall,
        ),
        Endpoint(
            "POST",
            "/verify/structured-output",
            "Whether every answer with text is JSON that meets a JSON Schema; where each one does not",
            verify_structured_output,
            GateVerified,
            Access.READ,
            body=VerifyStructuredOutput,
        ),
        Endpoint(
            "POST",
            "/verify/cost",
            "Whether the answers' estimated cost is within a budget in US dollars; the total and what is unpriced",
            verify_cost,
            GateVerified,
            Access.READ,
            body=VerifyCost,
        ),
        Endpoint(
            "POST",
            "/verify/drift",
            "Re-send a cassette's requests to the live provider: whether the answers still have the recorded shape",
            verify_drift,
            DriftVerified,  # it spends the user's keys: not for the read-only token
            body=VerifyDrift,
        ),
    ]


def drifted(verify: VerifyDrift) -> DriftVerified:
    """`llmproxy verify drift --live` on `verify.cassette`, judged by the same gate."""
    from llmproxy.analysis.drift import check, sender, verdict
    from llmproxy.cassette.store import load_cassette

    try:
        exchanges = load_cassette(Path(verify.cassette)).exchanges
    except LlmproxyError as error:
        raise ApiError(400, str(error)) from None
    judged = verdict(check(exchanges, sender(verify.timeout)))
    document = judged.as_json()
    return DriftVerified(
        ok=judged.outcome is GateOutcome.PASS,
        outcome=document["outcome"],
        reasons=judged.reasons,
        summary=judged.summary,
        details={key: value for key, value in document.items() if key not in _SAID},
    )


def verified(journal: Journal, verify: VerifyRequests) -> Verified:
    """The journal's requests counted against `verify`: each read with the mock's own predicates."""
    held: list[int] = []
    near: list[tuple[int, int, list[str]]] = []
    conversation = has_conversation_predicates(verify.match)
    for entry in journal.read(Query(source=verify.source, test_id=verify.test_id)):
        failed = failed_predicates(verify.match, entry.asked(conversation))
        if failed:
            near.append((len(failed), entry.seq, failed))
        else:
            held.append(entry.seq)
    low, high = verify.bounds()
    ok = low <= len(held) and (high is None or len(held) <= high)
    closest = [] if ok else _nearest(journal, near)
    return Verified(ok=ok, count=len(held), expected=_expected(low, high), matched=held, closest=closest)


def sequenced(journal: Journal, verify: VerifySequence) -> SequenceVerified:
    """Whether a request held to each step of `verify`, each after the one before it; when not, the step no
    request came for, the requests that held to it too early, and what came instead."""
    entries = journal.read(Query(source=verify.source, test_id=verify.test_id))
    steps = verify.sequence
    conversation = any(has_conversation_predicates(step) for step in steps)
    matched: list[int] = []
    for entry in entries:
        if len(matched) == len(steps):
            break
        if not failed_predicates(steps[len(matched)], entry.asked(conversation)):
            matched.append(entry.seq)
    if len(matched) == len(steps):
        return SequenceVerified(ok=True, matched=matched)
    step = len(matched)
    match = steps[step]
    start = _after(entries, matched[-1]) if matched else 0
    earlier = [entry.seq for entry in entries[:start] if not failed_predicates(match, entry.asked(conversation))]
    near = [
        (len(failed), entry.seq, failed)
        for entry in entries[start:]
        if (failed := failed_predicates(match, entry.asked(conversation)))
    ]
    return SequenceVerified(
        ok=False,
        matched=matched,
        broken_step=step + 1,
        reason=_broken(step, match, matched, earlier, len(entries) - start),
        earlier=earlier,
        closest=_nearest(journal, near),
    )


def _after(entries: Sequence[Entry], seq: int) -> int:
    """The position in `entries` just after the entry numbered `seq`."""
    return next(index for index, entry in enumerate(entries, 1) if entry.seq == seq)


def _broken(step: int, match: spec.Match, matched: list[int], earlier: list[int], came: int) -> str:
    said = _said(match)
    if not matched:
        return f"step 1 ({said}): no request holds to it" + (f" among {came}" if came else ": the journal has none")
    where = f"after step {step} (request {matched[-1]})"
    if earlier:
        numbers = ", ".join(map(str, earlier))
        return f"step {step + 1} ({said}): no request holds to it {where}; request {numbers} did, before it"
    return f"step {step + 1} ({said}): no request holds to it {where}, nor before it"


def _said(match: spec.Match) -> str:
    return match.model_dump_json(exclude_none=True) if match.model_dump(exclude_none=True) else "any request"


def _nearest(journal: Journal, near: list[tuple[int, int, list[str]]]) -> list[NearMiss]:
    """The requests that failed the fewest predicates (the oldest first among equals), with what each failed."""
    closest = []
    for _, seq, failed in sorted(near, key=lambda item: item[:2])[:CLOSEST]:
        entry = journal.get(seq)
        if entry is not None:
            glance = entry.glance
            closest.append(NearMiss(seq=seq, url=glance.url, model=glance.model, failed=failed))
    return closest


def _expected(low: int, high: int | None) -> str:
    if low == high:
        return f"exactly {low}"
    if high is None:
        return f"at least {low}"
    return f"at most {high}" if low == 0 else f"at least {low} and at most {high}"


def _calls(journal: Journal, scope: JournalScope, reader: Reader) -> tuple[list[RecordedCall], Coverage]:
    """The chat calls of the entries `scope` chooses, in the order the gates of `llmproxy verify` read a
    cassette's, and what of them could be read."""
    read = reader.read(journal, scope.source, scope.test_id)
    calls, _ = select(read.calls, Selection())
    return calls, Coverage.of(len(calls), 0, 0, ((source.path, source.skipped) for source in read.sources))


def _answered(
    journal: Journal, scope: JournalScope, reader: Reader, tool_calls: bool = True
) -> tuple[Sequence[AnsweredCall | RecordedCall], Coverage]:
    """The chat calls of the entries `scope` chooses as the gates that judge answers alone read them (their
    model, usage and, unless `tool_calls` is False, tool calls: `journal_calls.answered_calls`), in `_calls`'
    order, and what of them could be read."""
    read = reader.answers(journal, scope.source, scope.test_id, tool_calls)
    return read.calls, Coverage.of(len(read.calls), 0, 0, ((source.path, source.skipped) for source in read.sources))


def _judged(
    verdict: Verdict, calls: Sequence[AnsweredCall | RecordedCall], coverage: Coverage, allow_partial: bool
) -> GateVerified:
    judged = covered(verdict, coverage, allow_partial)
    document = judged.as_json()
    details = {key: value for key, value in document.items() if key not in _SAID}
    return GateVerified(
        ok=judged.outcome is GateOutcome.PASS,
        outcome=document["outcome"],
        reasons=judged.reasons,
        summary=judged.summary,
        calls=[call.exchange_id for call in calls],
        details=details,
    )


_SAID: Final = frozenset({"gate", "outcome", "passed", "reasons", "summary"})  # a verdict's fields said apart
