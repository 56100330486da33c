"""Request and token quotas (MockServer's `LlmQuotaRegistry`): fixed windows in a `Store`, shared by
`quotaName`, and the rate-limit state they advertise.

A request is counted against the request quota when it arrives and refused when the window is full. Token
quotas are charged with each answer's usage when it is known; a request arriving while a token window is
already spent is refused until the window ends. The request quota is checked first.
"""

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from llmproxy.intercept.counters import Count, Store
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.model import Usage
from llmproxy.providers.base import RateLimits


class Unit(StrEnum):
    REQUESTS = "requests"
    TOKENS = "tokens"
    INPUT_TOKENS = "input-tokens"
    OUTPUT_TOKENS = "output-tokens"


@dataclass(frozen=True, slots=True)
class Breach:
    """A quota refused the request: which, its limit, and when its window ends (seconds)."""

    unit: Unit
    limit: int
    used: int
    reset: float


@dataclass(frozen=True, slots=True)
class Standing:
    """Where each of a profile's quotas stands after admitting a request: (unit, limit, count)."""

    counts: tuple[tuple[Unit, int, Count], ...]

    def limits(self) -> RateLimits:
        """The state to advertise on a success: limits, what remains, and when each window ends."""
        fields: dict[str, Any] = {}
        for unit, limit, count in self.counts:
            prefix = unit.value.replace("-", "_")
            fields[f"{prefix}_limit"] = limit
            fields[f"{prefix}_remaining"] = max(0, limit - count.used)
            fields[f"{prefix}_reset"] = count.reset_ms / 1000
        return RateLimits(**fields)


def admit(profile: ChaosProfile, name: str, store: Store, now_ms: int) -> Breach | Standing:
    """Count one request against `profile`'s request quota, then check its token quotas (named `name`)."""
    counts: list[tuple[Unit, int, Count]] = []
    if profile.quotaLimit is not None and profile.quotaWindowMillis is not None:
        count = store.admit(_key(name, Unit.REQUESTS), 1, profile.quotaLimit, profile.quotaWindowMillis, now_ms)
        if not count.admitted:
            return Breach(Unit.REQUESTS, profile.quotaLimit, count.used, count.reset_ms / 1000)
        counts.append((Unit.REQUESTS, profile.quotaLimit, count))
    window = profile.tokenQuotaWindowMillis
    if window is not None:
        for unit, limit in token_limits(profile):
            count = store.peek(_key(name, unit), window, now_ms)
            if count.used >= limit:
                return Breach(unit, limit, count.used, count.reset_ms / 1000)
            counts.append((unit, limit, count))
    return Standing(tuple(counts))


def standing(profile: ChaosProfile, name: str, store: Store, now_ms: int) -> Standing:
    """Where `profile`'s quotas (named `name`) stand now, nothing counted: what the telemetry's gauges show."""
    counts: list[tuple[Unit, int, Count]] = []
    if profile.quotaLimit is not None and profile.quotaWindowMillis is not None:
        count = store.peek(_key(name, Unit.REQUESTS), profile.quotaWindowMillis, now_ms)
        counts.append((Unit.REQUESTS, profile.quotaLimit, count))
    if (window := profile.tokenQuotaWindowMillis) is not None:
        counts += [(unit, limit, store.peek(_key(name, unit), window, now_ms)) for unit, limit in token_limits(profile)]
    return Standing(tuple(counts))


def charge(profile: ChaosProfile, name: str, store: Store, usage: Usage, now_ms: int) -> None:
    """Charge an answer's tokens to `profile`'s token quotas."""
    window = profile.tokenQuotaWindowMillis
    if window is None:
        return
    amounts = {
        Unit.TOKENS: usage.input_tokens + usage.output_tokens,
        Unit.INPUT_TOKENS: usage.input_tokens,
        Unit.OUTPUT_TOKENS: usage.output_tokens,
    }
    for unit, _ in token_limits(profile):
        if amounts[unit]:
            store.add(_key(name, unit), amounts[unit], window, now_ms)


def token_limits(profile: ChaosProfile) -> list[tuple[Unit, int]]:
    limits = (
        (Unit.TOKENS, profile.tokenQuotaLimit),
        (Unit.INPUT_TOKENS, profile.inputTokenQuotaLimit),
        (Unit.OUTPUT_TOKENS, profile.outputTokenQuotaLimit),
    )
    return [(unit, limit) for unit, limit in limits if limit is not None]


def breach_limits(breach: Breach) -> RateLimits:
    """The state a refusal advertises: the breached quota with nothing left, its reset, and `retry_after`
    equal to that reset, so the headers and the wait agree."""
    prefix = breach.unit.value.replace("-", "_")
    fields: dict[str, Any] = {
        f"{prefix}_limit": breach.limit,
        f"{prefix}_remaining": 0,
        f"{prefix}_reset": breach.reset,
    }
    return RateLimits(**fields, retry_after=breach.reset)


def _key(name: str, unit: Unit) -> str:
    return f"quota:{name}:{unit.value}"
