"""What the client did after each injected fault, and whether the run recovered — from the requests and what
answered them, in the order they arrived: while the proxy runs (the end-of-run summary), and over a cassette
afterwards (`llmproxy report`, `llmproxy verify resilience`).

A later request with the same body as the faulted one is a retry (a client retries the very request that
failed); its delay is measured from the faulted request and compared with the `retry-after` it was sent.
A fault with no retry is *carried on* from when other requests followed (the client went on without that
answer, or with the broken one), and *given up* on when nothing did. A fault that only delayed or slowed
the answer was *answered* all the same.

Whether the client recovered is what it got, not what llmproxy meant: a fault is recovered once a successful
answer (a 2xx with no fault that took the answer away) came after it — to a retry of its request, or, when the
client stopped retrying it, to a later request. A retry that met an error of the upstream's own (or of a
recording's) is no recovery.

Bodies are compared by length first, and hashed only when a length matches an open fault's, so watching
every request costs next to nothing.
"""

import threading
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from llmproxy.intercept.faults import Injected
from llmproxy.words import plural

SLACK: Final = 0.05  # seconds a retry may come early and still count as honouring retry-after (clock reads)


class Next(StrEnum):
    RETRIED = "retried"
    CARRIED_ON = "carried_on"
    GAVE_UP = "gave_up"
    ANSWERED = "answered"  # the fault only delayed or slowed the answer: the client got it


@dataclass(slots=True)
class Outcome:
    """One injected fault and what followed it. `request` names it ("POST api.anthropic.com/v1/messages");
    `attempt` is the request it went into, `retry` the request that retried it."""

    fault: Injected
    request: str
    at: float  # seconds (the clock the requests were timed on)
    next: Next = Next.GAVE_UP
    retry_after: float | None = None  # seconds until the retry, when retried
    recovered: bool = False  # a successful answer came after it
    attempt: "Attempt | None" = field(default=None, repr=False, compare=False)
    retry: "Attempt | None" = field(default=None, repr=False, compare=False)

    @property
    def honoured(self) -> bool | None:
        """Whether the retry waited the retry-after it was sent; None without a retry or a retry-after."""
        if self.retry_after is None or self.fault.retry_after is None:
            return None
        return self.retry_after + SLACK >= self.fault.retry_after

    @property
    def last(self) -> bool:
        """Whether it is the last fault its request met: not retried into another one."""
        return self.next is not Next.RETRIED or self.retry is None or not self.retry.denied

    def describe(self) -> str:
        return f"{self.fault.describe()} on {self.request}: {self.followed()}"

    def followed(self) -> str:
        """What the client did next, and what it got, in words."""
        if self.next is Next.ANSWERED:
            return "answered all the same"
        if self.next is Next.RETRIED:
            assert self.retry_after is not None
            hint = ""
            if self.honoured is not None:
                verdict = "honoured" if self.honoured else "NOT honoured"
                hint = f" (retry-after {self.fault.retry_after:g} s {verdict})"
            got = self.retry.got() if self.retry is not None else "got no answer"
            return f"retried after {self.retry_after:.2f} s{hint}, {got}"
        if self.next is Next.CARRIED_ON:
            return "not retried; the client carried on" + ("" if self.recovered else ", and got no answer after it")
        return "the client gave up (no request followed)"

    def as_json(self) -> dict[str, Any]:
        fault = self.fault
        return {
            "kind": fault.kind.value,
            "rule": fault.rule,
            "detail": fault.detail,
            "status": fault.status,
            "retryAfterSeconds": fault.retry_after,
            "request": self.request,
            "next": self.next.value,
            "retriedAfterSeconds": round(self.retry_after, 3) if self.retry_after is not None else None,
            "honouredRetryAfter": self.honoured,
            "recovered": self.recovered,
            "followed": self.followed(),
        }


@dataclass(slots=True, eq=False)
class Attempt:
    """One request, as `seen` registered it: the faults it met (`faulted`) and the status it was answered with
    (`answered`: 0 when no answer came). Its body is let go once it belongs to a chain (which has its length and
    hash): the outcomes that keep an attempt do not keep every faulted request whole."""

    body: bytes
    at: float
    chain: "_Chain | None" = None
    faults: list[Outcome] = field(default_factory=list)
    status: int | None = None
    ok: bool = False

    @property
    def denied(self) -> bool:
        """Whether a fault took its answer away (an error, a cut stream, a wrong answer: not just a delay)."""
        return any(not outcome.fault.kind.keeps_answer for outcome in self.faults)

    @property
    def succeeded(self) -> bool:
        """Whether the client got a successful answer to it."""
        return self.ok and not self.denied

    def got(self) -> str:
        """What the client got, in words."""
        if self.denied:
            return "faulted again"
        if self.succeeded:
            return "answered"
        if not self.status:
            return "got no answer"
        return f"failed again: status {self.status}"


@dataclass(slots=True, eq=False)
class _Chain:
    """The attempts at one request body since its first fault, and what came after the latest: other requests
    whose answers are not known yet (`pending`), whether the client went on to any (`went_on`), and whether one
    was answered (`carried`)."""

    length: int
    key: int
    faults: list[Outcome]
    attempts: list[Attempt]
    pending: list[Attempt] = field(default_factory=list)
    went_on: bool = False
    carried: bool = False

    @property
    def latest(self) -> Attempt:
        return self.attempts[-1]


class Aftermath:
    def __init__(self) -> None:
        self._outcomes: list[Outcome] = []
        self._open: list[_Chain] = []
        self._lock = threading.Lock()

    @property
    def watching(self) -> bool:
        """Whether a fault is open: a request may be its retry, or show the client carried on."""
        return bool(self._open)

    def seen(self, body: bytes, at: float, goes_on: bool = True) -> Attempt:
        """A request arrived at `at`: a retry of a faulted one when its body is the same. With no fault open,
        nothing to compare: every request passes here, and most runs have none. `goes_on`: whether another
        request shows the client going on (an LLM request; not a CLI's telemetry)."""
        attempt = Attempt(body, at)
        if not self._open:  # read without the lock: a fault still being registered cannot be this one's
            return attempt
        with self._lock:
            key: int | None = None
            for chain in list(self._open):
                if attempt.chain is None and chain.length == len(body):
                    key = hash(body) if key is None else key
                    if key == chain.key:
                        self._retried(chain, attempt)
                        continue
                if goes_on:
                    self._went_on(chain, attempt)
        return attempt

    def faulted(self, attempt: Attempt, fault: Injected, request: str) -> Outcome:
        """`attempt` (`request` names it: "POST api.anthropic.com/v1/messages") got this fault; what followed
        it fills in as later requests are `seen` and `answered`."""
        outcome = Outcome(fault, request, attempt.at, attempt=attempt)
        with self._lock:
            self._outcomes.append(outcome)
            attempt.faults.append(outcome)
            if attempt.chain is None:
                attempt.chain = _Chain(len(attempt.body), hash(attempt.body), [], [attempt])
                self._open.append(attempt.chain)
                attempt.body = b""  # its chain has what matching needs: the outcomes keep the attempt, not the body
            attempt.chain.faults.append(outcome)
        return outcome

    def answered(self, attempt: Attempt, status: int, ok: bool | None = None) -> None:
        """What answered `attempt`: its status (0: no answer came); `ok` when success is not a 2xx alone."""
        attempt.status = status
        attempt.ok = 200 <= status < 300 if ok is None else ok

    @property
    def outcomes(self) -> list[Outcome]:
        """Every fault so far with what followed it, in the order they were injected."""
        with self._lock:
            for chain in list(self._open):
                self._settle(chain)
            return list(self._outcomes)

    @property
    def recovered(self) -> bool:
        """Whether a successful answer came after every fault."""
        return all(outcome.recovered for outcome in self.outcomes)

    def _retried(self, chain: _Chain, attempt: Attempt) -> None:
        self._settle(chain)
        if chain not in self._open:  # answered since: a request like it is a new one
            return
        for outcome in chain.latest.faults:
            outcome.next = Next.RETRIED
            outcome.retry_after = attempt.at - outcome.at
            outcome.retry = attempt
        chain.attempts.append(attempt)
        chain.pending, chain.went_on, chain.carried = [], False, False  # what came before is no carrying on
        attempt.chain, attempt.body = chain, b""

    def _went_on(self, chain: _Chain, attempt: Attempt) -> None:
        """Another request after the chain's latest attempt: the client went on."""
        for outcome in chain.latest.faults:
            if outcome.next is Next.GAVE_UP:
                outcome.next = Next.CARRIED_ON
        chain.went_on = True
        chain.pending.append(attempt)
        self._settle(chain)

    def _settle(self, chain: _Chain) -> None:
        """Whether a successful answer has come after the chain's faults: one of its attempts (then it is
        closed), or a request it went on to."""
        for attempt in chain.attempts:
            if attempt.succeeded:
                for outcome in chain.faults:
                    outcome.recovered = True
                for outcome in attempt.faults:  # only delayed or slowed: answered all the same
                    outcome.next = Next.ANSWERED
                self._open.remove(chain)
                return
        chain.carried = chain.carried or any(other.succeeded for other in chain.pending)
        chain.pending = [other for other in chain.pending if other.status is None]  # the others are decided
        for outcome in chain.faults:
            outcome.recovered = chain.carried


def verdict(outcomes: list[Outcome]) -> str:
    """Whether a successful answer came after every fault, in a line."""
    lost = [outcome for outcome in outcomes if not outcome.recovered]
    ignored = [outcome for outcome in outcomes if outcome.honoured is False]
    if lost:
        chains = {id(outcome.attempt.chain): outcome.attempt.chain for outcome in lost if outcome.attempt}
        faults, requests = plural(len(lost), "fault"), plural(len(chains), "request")
        if not any(chain is not None and chain.went_on for chain in chains.values()):
            return f"the run did not recover: the client gave up on {requests} after {faults}"
        return f"the run did not recover: the client got no answer after {faults} (on {requests})"
    labels = ((Next.RETRIED, "retried"), (Next.CARRIED_ON, "carried on"), (Next.ANSWERED, "only delayed the answer"))
    counts = [(sum(1 for outcome in outcomes if outcome.next is kind), label) for kind, label in labels]
    parts = [f"{count} {label}" for count, label in counts if count]
    how = ", ".join(parts).replace(" ", f" of {plural(len(outcomes), 'fault')} ", 1)  # "2 of 3 faults retried, …"
    hint = f"; {plural(len(ignored), 'retry', 'retries')} came sooner than retry-after said" if ignored else ""
    return f"the run recovered: {how}{hint}"
