"""The intercept: which profiles apply to a request, and what they decide, in MockServer's order — the budget,
request quotas, token quotas, then (for the requests a profile's window makes eligible) a dropped connection,
an error, a misbehaving model, and last the shaping of an answer let through.

Profiles come from three places, most specific first: the request's own `x-llmproxy-chaos` header, the
profile set for its host while running (`hosts`, the control API), and the rules of the chaos file and the
command line. Every applicable profile's quotas count; the first fault that fires wins. Everything here is
decided from the request, the counters in the store, the injected clock and seeded draws (`draw.py`), so
the same seed and the same requests give the same faults.
"""

import functools
import itertools
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import fields, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, NamedTuple, Protocol

from llmproxy.intercept import quota
from llmproxy.intercept.aftermath import Aftermath
from llmproxy.intercept.counters import Store
from llmproxy.intercept.decision import PASS, SPEND, Charge, Decision, Dropped, Misbehaved, Refusal, Through
from llmproxy.intercept.draw import chance, fires, new_seed
from llmproxy.intercept.faults import FaultKind, Injected
from llmproxy.intercept.hosts import HostRegistry
from llmproxy.intercept.model_faults import misbehaving
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.intercept.retry_after import RetryAfter, retry_after
from llmproxy.intercept.rules import ChaosFile, Rule
from llmproxy.intercept.selection import RuleSelection, Where
from llmproxy.intercept.shaping import Shaping
from llmproxy.intercept.store import MemoryStore
from llmproxy.model import Conversation, ErrorKind, Route, Usage
from llmproxy.providers.base import RateLimits, status_kind
from llmproxy.providers.registry import chat_codec

if TYPE_CHECKING:  # pricing (genai_prices) is imported only when a budget needs it: start-up stays light
    from llmproxy.intercept.budget import Budget
    from llmproxy.pricing import PriceBook

logger = logging.getLogger(__name__)

OVERRIDE = "x-llmproxy-chaos"


class Request(Where, Protocol):
    """What the intercept reads of a request: what its rules read, and more (the chain's `Incoming` has it all)."""

    @property
    def port(self) -> int: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def conversation(self) -> Conversation | None: ...


class Applied(NamedTuple):  # one per request a profile applies to: a tuple costs half a frozen dataclass
    """A profile applying to a request: where it came from (`scope`, its name in logs and counters), and the
    request's number among those it has seen (1-based: what its window and its draws go by)."""

    scope: str
    profile: ChaosProfile
    number: int


class Intercept:
    def __init__(
        self,
        chaos: ChaosFile | None = None,
        store: Store | None = None,
        *,
        clock: Callable[[], float] = time.time,
        book: "PriceBook | None" = None,
        quiet: bool = False,
    ) -> None:
        """`quiet`: no warning when the budget is spent (a what-if reports it otherwise)."""
        chaos = chaos or ChaosFile()
        self.seed = chaos.seed if chaos.seed is not None else new_seed()
        self.store: Store = store or MemoryStore()
        self.rules: tuple[Rule, ...] = chaos.rules  # never changed: a new chaos is a new Intercept
        self._selected = RuleSelection(self.rules)
        self.hosts = HostRegistry(clock)
        self.budget = _budget(chaos.budgetUsd, self.store, book) if chaos.budgetUsd is not None else None
        self.clock = clock
        self.injected: Counter[FaultKind] = Counter()
        self.stood_in = 0  # requests answered by a fault in place of what answers (a mock never saw them)
        self.aftermath = Aftermath()  # what the client did after each fault
        self._numbers: dict[str, Iterator[int]] = {}  # each counted scope's requests (next() holds the GIL)
        self._quotas: dict[str, ChaosProfile] = {}  # each quota counted so far, by name: its latest profile
        self._lock = threading.Lock()
        self._budget_warned = quiet

    @property
    def active(self) -> bool:
        """Whether anything may happen to a request: nothing at all costs nothing."""
        return bool(self.rules) or bool(self.hosts) or self.budget is not None

    def decide(
        self, request: Request, override: ChaosProfile | None = None, turn: tuple[str, ChaosProfile] | None = None
    ) -> Decision:
        """The decision for `request`: with its header's profile `override`, or (`turn`) only the profile a
        mock turn carries, applied after the mock chose that turn. A request no profile applies to costs a
        look-up (`selection.py`) and gets `PASS` (or `SPEND`, under a budget): nothing decoded, drawn or built."""
        llm = request.route is not None
        spend = self.budget is not None and llm
        if spend and (refusal := self._over_budget()) is not None:
            return refusal
        if turn is not None:
            applied = self._numbered([(*turn, turn[0])])
        elif override is None and not self.hosts:  # the rules alone: usually none apply, or the same few
            selected = self._selected(request) if self.rules else ()
            applied = self._numbered(selected) if selected else []
        else:
            applied = self._applicable(request, override)
        if not applied:
            return SPEND if spend else PASS
        now = self.clock()
        standings: list[RateLimits] = []
        charges: list[Charge] = []
        for entry in applied:
            profile = entry.profile
            if not profile.has_quota:
                continue
            name = profile.quotaName or entry.scope
            self._quotas[name] = profile
            result = quota.admit(profile, name, self.store, int(now * 1000))
            if isinstance(result, quota.Breach):
                return self._quota_refusal(entry, result, now)
            standings.append(result.limits())
            if profile.tokenQuotaWindowMillis is not None:
                charges.append(Charge(profile, name))
        limits = _merged(standings) if standings else None
        shaped_by: Applied | None = None
        for entry in applied:
            profile = entry.profile
            if profile.windowed and not _eligible(entry):
                continue
            if profile.faults and (fault := self._fault(entry, request, now, limits)) is not None:
                self.count(fault.fault)
                return fault
            if shaped_by is None and profile.shapes_answers:
                shaped_by = entry
        if shaped_by is None and limits is None and not charges:
            return SPEND if spend else PASS
        shaping = self._shaping(shaped_by) if shaped_by is not None else None
        scope = shaped_by.scope if shaped_by is not None else ""
        return Through(shaping, scope, limits, tuple(charges), spend)

    def settle(
        self,
        through: Through,
        usage: Usage | None,
        model: str | None,
        route: Route | None,
        url: str,
        vendor: str | None,
    ) -> None:
        """An answer let through is known: its tokens go to the token quotas, its cost to the budget (an answer
        whose usage is unknown is counted as unpriced)."""
        now = self.clock()
        if usage is not None:
            for charge in through.charges:
                quota.charge(charge.profile, charge.name, self.store, usage, int(now * 1000))
        if through.spend and self.budget is not None:
            at = datetime.fromtimestamp(now, UTC)
            provider = route.provider if route is not None else None
            self.budget.spend(usage, model, at=at, url=url, vendor=vendor, provider=provider)

    def quota_standings(self) -> list[tuple[str, quota.Standing]]:
        """Each quota a request has been counted against, by name, as it stands now."""
        now_ms = int(self.clock() * 1000)
        return [
            (name, quota.standing(profile, name, self.store, now_ms)) for name, profile in list(self._quotas.items())
        ]

    def stand_in(self) -> None:
        """A request got a fault in place of its answer, before anything behind the intercept saw it."""
        with self._lock:
            self.stood_in += 1

    def count(self, fault: Injected) -> None:
        """One injected fault, for the summary; each is logged (with its rule) under --debug."""
        with self._lock:
            self.injected[fault.kind] += 1
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("injected %s", fault.describe())

    def _applicable(self, request: Request, override: ChaosProfile | None) -> list[Applied]:
        """Each applicable profile: its name, itself, and the key its requests are counted under."""
        found: list[tuple[str, ChaosProfile, str]] = []
        if override is not None:
            found.append((OVERRIDE, override, OVERRIDE))
        if self.hosts and (hit := self.hosts.lookup(request.host, request.port)) is not None:
            key, registration = hit
            found.append((f"host {key}", registration.profile, f"host {key}#{registration.serial}"))
        if self.rules:
            found.extend(self._selected(request))
        return self._numbered(found) if found else []

    def _numbered(self, found: Sequence[tuple[str, ChaosProfile, str]]) -> list[Applied]:
        counts = self._numbers
        return [
            Applied(scope, profile, next(counts.get(counted) or counts.setdefault(counted, itertools.count(1))))
            for scope, profile, counted in found
        ]

    def _over_budget(self) -> Refusal | None:
        assert self.budget is not None
        spend = self.budget.standing()
        if not spend.exhausted:
            return None
        if not self._budget_warned:
            self._budget_warned = True
            logger.warning("budget spent: %s; refusing LLM requests from now on", spend.describe())
        message = f"llmproxy budget exhausted: {spend.describe()}"
        fault = Injected(FaultKind.BUDGET, spend.name, spend.detail, 429)
        self.count(fault)
        return Refusal(fault, 429, ErrorKind.QUOTA_EXCEEDED, message, final=True)

    def _quota_refusal(self, entry: Applied, breach: quota.Breach, now: float) -> Refusal:
        profile = entry.profile
        retry = _retry(profile, now) or RetryAfter(breach.reset)
        unit = breach.unit.value
        kind = FaultKind.QUOTA if breach.unit is quota.Unit.REQUESTS else FaultKind.TOKEN_QUOTA
        window = profile.quotaWindowMillis if kind is FaultKind.QUOTA else profile.tokenQuotaWindowMillis
        detail = f"{breach.used} of {breach.limit} {unit} per {window} ms used ({profile.quotaName or entry.scope})"
        fault = Injected(kind, entry.scope, detail, profile.quotaErrorStatus, retry.seconds)
        self.count(fault)
        message = f"Rate limit exceeded: {detail}; retry in {retry.seconds:g} s (injected by llmproxy)"
        kind_of_error = (
            ErrorKind.RATE_LIMIT if profile.quotaErrorStatus == 429 else status_kind(profile.quotaErrorStatus)
        )
        limits = quota.breach_limits(breach)
        return Refusal(fault, profile.quotaErrorStatus, kind_of_error, message, retry, limits)

    def _fault(
        self, entry: Applied, request: Request, now: float, limits: RateLimits | None
    ) -> Refusal | Dropped | Misbehaved | None:
        profile, scope, number = entry.profile, entry.scope, entry.number
        seed = profile.seed if profile.seed is not None else self.seed
        if profile.connectionDrop or (
            profile.dropConnectionProbability is not None
            and fires(profile.dropConnectionProbability, seed, scope, number, "drop")
        ):
            return Dropped(Injected(FaultKind.DROP, scope, "connection closed without an answer"))
        status = profile.errorStatus
        if status is not None and fires(profile.errorProbability, seed, scope, number, "error"):
            refusal = _error(scope, status, profile.errorMessage, _retry(profile, now))
            return refusal if limits is None else replace(refusal, limits=limits)
        model_fault = profile.modelFault
        route = request.route
        if (
            model_fault is not None
            and route is not None
            and chat_codec(route) is not None
            and fires(profile.modelFaultProbability, seed, scope, number, "model")
        ):
            kind = FaultKind.of_model_fault(model_fault)
            completion = misbehaving(model_fault, request.conversation, request.model, number)
            return Misbehaved(Injected(kind, scope, f"model fault {model_fault.value}"), completion)
        return None

    def _shaping(self, entry: Applied) -> Shaping:
        """How the profile of `entry` shapes the answer to its request."""
        profile = entry.profile
        seed = profile.seed if profile.seed is not None else self.seed
        latency = profile.latency
        first_byte = per_event = 0.0
        if latency is not None:
            jitter = latency.jitterMs * chance(seed, entry.scope, entry.number, "jitter")
            first_byte = (latency.fixedMs + jitter + latency.firstByteMs) / 1000
            per_event = latency.perEventMs / 1000
        return Shaping(
            cut=profile.truncation,
            malformed_after=profile.malformedAfterEvents if profile.malformedSse else None,
            first_byte=first_byte,
            per_event=per_event,
            chunk=profile.slowResponseChunkSize,
            chunk_delay=(profile.slowResponseChunkDelayMs or 0) / 1000,
        )


def _budget(limit: Decimal, store: Store, book: "PriceBook | None") -> "Budget":
    from llmproxy.intercept.budget import Budget

    return Budget(limit, store, book)


def _retry(profile: ChaosProfile, now: float) -> RetryAfter | None:
    """The profile's retry-after at `now` (a date is read against it)."""
    if profile.retryAfter is None:
        return None
    return retry_after(profile.retryAfter, datetime.fromtimestamp(now, UTC))


@functools.lru_cache(maxsize=256)
def _error(scope: str, status: int, message: str | None, retry: RetryAfter | None) -> Refusal:
    """An injected error: the same for every request a profile faults (the reply to it is kept too)."""
    fault = Injected(FaultKind.ERROR, scope, f"status {status}", status, retry.seconds if retry else None)
    text = message or f"{_phrase(status)} (injected by llmproxy: {scope})"
    return Refusal(fault, status, status_kind(status), text, retry)


def _eligible(entry: Applied) -> bool:
    """Inside the profile's window: after `succeedFirst` requests, for `failRequestCount` of them."""
    profile = entry.profile
    first = profile.succeedFirst or 0
    count = profile.failRequestCount
    return entry.number > first and (count is None or entry.number <= first + count)


def _merged(standings: list[RateLimits]) -> RateLimits:
    """Several profiles' rate-limit states as one: each field from the first that sets it."""
    merged = standings[0]
    for other in standings[1:]:
        updates = {f.name: getattr(other, f.name) for f in fields(RateLimits) if getattr(merged, f.name) is None}
        merged = replace(merged, **{name: value for name, value in updates.items() if value is not None})
    return merged


def _phrase(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Overloaded" if status == 529 else f"Error {status}"
