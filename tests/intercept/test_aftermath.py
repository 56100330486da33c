"""What the client did after each fault: retried (after how long, honouring retry-after or not), carried on,
or gave up; and whether it recovered — judged by what the client got, never by what llmproxy meant: a fault
is recovered only once a successful answer came after it."""

from llmproxy.intercept.aftermath import Aftermath, Attempt, Next, verdict
from llmproxy.intercept.faults import FaultKind, Injected

OVERLOADED = Injected(FaultKind.ERROR, "--fail 529", "status 529", 529, 0.5)
SLOW = Injected(FaultKind.LATENCY, "rule 1", "1.000 s to the first byte, +0.000 s per event")


def faulted(aftermath: Aftermath, body: bytes, at: float, fault: Injected = OVERLOADED) -> Attempt:
    attempt = aftermath.seen(body, at)
    aftermath.faulted(attempt, fault, "POST api.anthropic.com/v1/messages")
    return attempt


def answered(aftermath: Aftermath, body: bytes, at: float, status: int = 200) -> Attempt:
    attempt = aftermath.seen(body, at)
    aftermath.answered(attempt, status)
    return attempt


def test_two_faults_then_an_answer_are_two_retries_and_a_recovery() -> None:
    aftermath = Aftermath()
    faulted(aftermath, b'{"turn": 1}', 0.0)
    faulted(aftermath, b'{"turn": 1}', 0.6)
    answered(aftermath, b'{"turn": 1}', 1.1)
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
        "retried after 0.60 s (retry-after 0.5 s honoured), faulted again"
    )
    assert second.followed() == "retried after 0.50 s (retry-after 0.5 s honoured), answered"
    assert verdict(aftermath.outcomes) == "the run recovered: 2 of 2 faults retried"


def test_a_retry_that_failed_without_an_injected_fault_is_not_answered_nor_recovered() -> None:
    """The client's last retry met an error of the upstream's (or a recording's) own, and it gave up."""
    aftermath = Aftermath()
    faulted(aftermath, b"turn", 0.0)
    faulted(aftermath, b"turn", 0.6)
    answered(aftermath, b"turn", 1.2, status=529)
    first, second = aftermath.outcomes
    assert [first.next, second.next] == [Next.RETRIED, Next.RETRIED]
    assert not first.recovered
    assert not second.recovered
    assert second.followed() == "retried after 0.60 s (retry-after 0.5 s honoured), failed again: status 529"
    assert not aftermath.recovered
    assert verdict(aftermath.outcomes) == "the run did not recover: the client gave up on 1 request after 2 faults"


def test_a_retry_whose_answer_never_came_is_no_recovery() -> None:
    aftermath = Aftermath()
    faulted(aftermath, b"turn", 0.0)
    aftermath.seen(b"turn", 0.6)  # the run ended before its answer
    (outcome,) = aftermath.outcomes
    assert (outcome.next, outcome.recovered) == (Next.RETRIED, False)
    assert outcome.followed().endswith(", got no answer")


def test_three_faults_given_up_on_are_counted_as_three() -> None:
    aftermath = Aftermath()
    for at in (0.0, 0.6, 1.2):
        faulted(aftermath, b"turn", at)
    outcomes = aftermath.outcomes
    assert [outcome.next for outcome in outcomes] == [Next.RETRIED, Next.RETRIED, Next.GAVE_UP]
    assert not any(outcome.recovered for outcome in outcomes)
    assert verdict(outcomes) == "the run did not recover: the client gave up on 1 request after 3 faults"


def test_a_retry_sooner_than_retry_after_is_not_honouring_it() -> None:
    aftermath = Aftermath()
    faulted(aftermath, b"x", 0.0)
    answered(aftermath, b"x", 0.1)
    (outcome,) = aftermath.outcomes
    assert outcome.honoured is False
    assert "NOT honoured" in outcome.describe()
    assert verdict(aftermath.outcomes) == (
        "the run recovered: 1 of 1 fault retried; 1 retry came sooner than retry-after said"
    )


def test_another_request_after_a_fault_is_carrying_on_and_nothing_after_is_giving_up() -> None:
    aftermath = Aftermath()
    faulted(aftermath, b"first", 0.0, Injected(FaultKind.TRUNCATE, "rule 1", "cut after 3 events"))
    answered(aftermath, b"second, longer", 1.0)
    faulted(aftermath, b"third", 2.0)
    carried, gave_up = aftermath.outcomes
    assert (carried.next, carried.recovered) == (Next.CARRIED_ON, True)  # the second request was answered
    assert (gave_up.next, gave_up.recovered) == (Next.GAVE_UP, False)
    assert not aftermath.recovered
    assert verdict(aftermath.outcomes) == "the run did not recover: the client gave up on 1 request after 1 fault"


def test_carrying_on_to_requests_that_all_fail_is_no_recovery() -> None:
    aftermath = Aftermath()
    faulted(aftermath, b"first", 0.0)
    answered(aftermath, b"second, longer", 1.0, status=500)
    (outcome,) = aftermath.outcomes
    assert (outcome.next, outcome.recovered) == (Next.CARRIED_ON, False)
    assert outcome.followed() == "not retried; the client carried on, and got no answer after it"
    assert (
        verdict(aftermath.outcomes) == "the run did not recover: the client got no answer after 1 fault (on 1 request)"
    )


def test_a_side_request_answered_between_a_fault_and_its_failed_retry_is_no_recovery() -> None:
    """A title request answered while the main turn is retried does not make up for the main turn."""
    aftermath = Aftermath()
    faulted(aftermath, b"main turn", 0.0)
    answered(aftermath, b"title", 0.2)
    faulted(aftermath, b"main turn", 0.7)
    first, second = aftermath.outcomes
    assert (first.next, first.recovered) == (Next.RETRIED, False)
    assert (second.next, second.recovered) == (Next.GAVE_UP, False)


def test_a_retry_interleaved_with_other_requests_is_still_a_retry() -> None:
    aftermath = Aftermath()
    faulted(aftermath, b"main turn", 0.0)
    answered(aftermath, b"title", 0.2)  # a side request of the same agent
    answered(aftermath, b"main turn", 0.7)
    (outcome,) = aftermath.outcomes
    assert (outcome.next, outcome.recovered) == (Next.RETRIED, True)


def test_a_fault_found_late_on_the_retry_still_counts() -> None:
    aftermath = Aftermath()
    faulted(aftermath, b"turn", 0.0)
    retry = answered(aftermath, b"turn", 0.6)
    aftermath.faulted(retry, Injected(FaultKind.TRUNCATE, "rule 1", "cut"), "r")  # known only when its stream ended
    first, cut = aftermath.outcomes
    assert (first.next, first.recovered) == (Next.RETRIED, False)
    assert first.followed().endswith(", faulted again")
    assert cut.next is Next.GAVE_UP


def test_a_fault_that_only_delayed_the_answer_was_answered() -> None:
    aftermath = Aftermath()
    attempt = faulted(aftermath, b"turn", 0.0, SLOW)
    aftermath.answered(attempt, 200)
    (outcome,) = aftermath.outcomes
    assert (outcome.next, outcome.recovered) == (Next.ANSWERED, True)
    assert outcome.followed() == "answered all the same"
    assert verdict(aftermath.outcomes) == "the run recovered: 1 of 1 fault only delayed the answer"


def test_background_requests_are_not_the_client_carrying_on() -> None:
    aftermath = Aftermath()
    faulted(aftermath, b"turn", 0.0)
    telemetry = aftermath.seen(b"telemetry event", 0.1, goes_on=False)
    aftermath.answered(telemetry, 200)
    (outcome,) = aftermath.outcomes
    assert (outcome.next, outcome.recovered) == (Next.GAVE_UP, False)
