"""What the client did after each fault: retried (after how long, honouring retry-after or not), carried on,
or gave up; and whether the run recovered."""

from llmproxy.intercept.aftermath import Aftermath, Next
from llmproxy.intercept.faults import FaultKind, Injected

OVERLOADED = Injected(FaultKind.ERROR, "--fail 529", "status 529", 529, 0.5)


def test_two_faults_then_an_answer_are_two_retries_and_a_recovery() -> None:
    aftermath = Aftermath()
    for at, faulted in ((0.0, True), (0.6, True), (1.1, False)):
        attempt = aftermath.seen(b'{"turn": 1}', at)
        if faulted:
            aftermath.faulted(attempt, OVERLOADED, "POST api.anthropic.com/v1/messages")
    first, second = aftermath.outcomes
    assert (first.next, round(first.retry_after or 0, 2), first.honoured, first.recovered) == (
        Next.RETRIED,
        0.6,
        True,
        True,
    )
    assert (second.next, round(second.retry_after or 0, 2), second.honoured) == (Next.RETRIED, 0.5, True)
    assert aftermath.recovered
    assert first.describe() == (
        "error: status 529 (--fail 529) on POST api.anthropic.com/v1/messages: "
        "retried after 0.60 s (retry-after 0.5 s honoured), answered"
    )


def test_a_retry_sooner_than_retry_after_is_not_honouring_it() -> None:
    aftermath = Aftermath()
    aftermath.faulted(aftermath.seen(b"x", 0.0), OVERLOADED, "r")
    aftermath.seen(b"x", 0.1)
    (outcome,) = aftermath.outcomes
    assert outcome.honoured is False
    assert "NOT honoured" in outcome.describe()


def test_another_request_after_a_fault_is_carrying_on_and_nothing_after_is_giving_up() -> None:
    aftermath = Aftermath()
    aftermath.faulted(aftermath.seen(b"first", 0.0), Injected(FaultKind.TRUNCATE, "rule 1", "cut after 3 events"), "r")
    aftermath.seen(b"second, longer", 1.0)
    aftermath.faulted(aftermath.seen(b"third", 2.0), OVERLOADED, "r")
    carried, gave_up = aftermath.outcomes
    assert (carried.next, carried.recovered) == (Next.CARRIED_ON, False)
    assert gave_up.next is Next.GAVE_UP
    assert not aftermath.recovered


def test_a_retry_interleaved_with_other_requests_is_still_a_retry() -> None:
    aftermath = Aftermath()
    aftermath.faulted(aftermath.seen(b"main turn", 0.0), OVERLOADED, "r")
    aftermath.seen(b"title", 0.2)  # a side request of the same agent
    aftermath.seen(b"main turn", 0.7)
    (outcome,) = aftermath.outcomes
    assert (outcome.next, outcome.recovered) == (Next.RETRIED, True)


def test_a_fault_found_late_on_the_retry_still_counts() -> None:
    aftermath = Aftermath()
    aftermath.faulted(aftermath.seen(b"turn", 0.0), OVERLOADED, "r")
    retry = aftermath.seen(b"turn", 0.6)
    aftermath.faulted(retry, Injected(FaultKind.TRUNCATE, "rule 1", "cut"), "r")  # known only when its stream ended
    first, cut = aftermath.outcomes
    assert (first.next, first.recovered) == (Next.RETRIED, False)
    assert cut.next is Next.GAVE_UP
