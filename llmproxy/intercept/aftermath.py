"""What the client did after each injected fault, and whether the run recovered — from the requests alone,
in the order they arrived: while the proxy runs (the end-of-run summary), and over a cassette afterwards
(`llmproxy report`, `llmproxy verify resilience`).

A later request with the same body as the faulted one is a retry (a client retries the very request that
failed); its delay is measured from the faulted request and compared with the `retry-after` it was sent.
A fault with no retry is *carried on* from when other requests followed (the client went on without that
answer, or with the broken one), and *given up* on when nothing did. A fault is recovered when a retry of
its request was answered without a fault.

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


@dataclass(slots=True)
class Outcome:
    """One injected fault and what followed it. `request` names it ("POST api.anthropic.com/v1/messages")."""

    fault: Injected
    request: str
    at: float  # seconds (the clock the requests were timed on)
    next: Next = Next.GAVE_UP
    retry_after: float | None = None  # seconds until the retry, when retried
    recovered: bool = False

    @property
    def honoured(self) -> bool | None:
        """Whether the retry waited the retry-after it was sent; None without a retry or a retry-after."""
        if self.retry_after is None or self.fault.retry_after is None:
            return None
        return self.retry_after + SLACK >= self.fault.retry_after

    def describe(self) -> str:
        return f"{self.fault.describe()} on {self.request}: {self.followed()}"

    def followed(self) -> str:
        """What the client did next, in words."""
        if self.next is Next.RETRIED:
            assert self.retry_after is not None
            hint = ""
            if self.honoured is not None:
                verdict = "honoured" if self.honoured else "NOT honoured"
                hint = f" (retry-after {self.fault.retry_after:g} s {verdict})"
            answered = "answered" if self.recovered else "faulted again"
            return f"retried after {self.retry_after:.2f} s{hint}, {answered}"
        if self.next is Next.CARRIED_ON:
            return "not retried; the client carried on"
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
class _Chain:
    """The attempts at one request body since its first fault: the faults of the attempts so far, and the
    latest attempt (which may still get faults of its own: a stream is cut only as it ends)."""

    length: int
    key: int
    faults: list[Outcome]
    latest: "Attempt"


@dataclass(slots=True, eq=False)
class Attempt:
    """One request, as `seen` registered it; faults are added to it with `faulted`."""

    body: bytes
    at: float
    chain: _Chain | None = None
    faults: list[Outcome] = field(default_factory=list)


class Aftermath:
    def __init__(self) -> None:
        self._outcomes: list[Outcome] = []
        self._open: list[_Chain] = []
        self._lock = threading.Lock()

    @property
    def watching(self) -> bool:
        """Whether a fault is open: a request may be its retry, or show the client carried on."""
        return bool(self._open)

    def seen(self, body: bytes, at: float) -> Attempt:
        """A request arrived at `at`: a retry of a faulted one when its body is the same. With no fault
        open, nothing to compare: every request passes here, and most runs have none."""
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
                for outcome in chain.latest.faults:
                    if outcome.next is Next.GAVE_UP:
                        outcome.next = Next.CARRIED_ON
        return attempt

    def faulted(self, attempt: Attempt, fault: Injected, request: str) -> Outcome:
        """`attempt` (`request` names it: "POST api.anthropic.com/v1/messages") got this fault; what followed
        it fills in as later requests are `seen`."""
        outcome = Outcome(fault, request, attempt.at)
        with self._lock:
            self._outcomes.append(outcome)
            attempt.faults.append(outcome)
            if attempt.chain is None:
                attempt.chain = _Chain(len(attempt.body), hash(attempt.body), [], attempt)
                self._open.append(attempt.chain)
            attempt.chain.faults.append(outcome)
        return outcome

    @property
    def outcomes(self) -> list[Outcome]:
        """Every fault so far with what followed it, in the order they were injected."""
        with self._lock:
            for chain in list(self._open):
                self._settle(chain)
            return list(self._outcomes)

    @property
    def recovered(self) -> bool:
        """Whether the client got past every fault — retried until answered, or carried on without that answer
        — rather than giving up on one (a run that ended on a fault)."""
        return all(outcome.next is not Next.GAVE_UP for outcome in self.outcomes)

    def _retried(self, chain: _Chain, attempt: Attempt) -> None:
        self._settle(chain)
        if chain not in self._open:
            return
        for outcome in chain.latest.faults:
            outcome.next = Next.RETRIED
            outcome.retry_after = attempt.at - outcome.at
        chain.latest = attempt
        attempt.chain = chain

    def _settle(self, chain: _Chain) -> None:
        """A chain whose latest attempt is a retry that got no fault has recovered: it is closed."""
        if chain.latest.faults or not chain.faults:
            return
        for outcome in chain.faults:
            outcome.recovered = True
        self._open.remove(chain)


def verdict(outcomes: list[Outcome]) -> str:
    """Whether the client got past every fault, in a line."""
    gave_up = [outcome for outcome in outcomes if outcome.next is Next.GAVE_UP]
    ignored = [outcome for outcome in outcomes if outcome.honoured is False]
    if gave_up:
        return f"the run did not recover: the client gave up after {plural(len(gave_up), 'fault')}"
    retried = sum(1 for outcome in outcomes if outcome.next is Next.RETRIED)
    hint = f"; {plural(len(ignored), 'retry', 'retries')} came sooner than retry-after said" if ignored else ""
    carried = len(outcomes) - retried
    how = f"{retried} of {plural(len(outcomes), 'fault')} retried" + (f", {carried} carried on" if carried else "")
    return f"the run recovered: {how}{hint}"
