"""A chaos profile: which faults, quotas and delays a request meets, with MockServer's field names
(`LlmChaosProfile`, `HttpChaosProfile`: errorStatus, errorProbability, retryAfter, seed, truncateAtFraction,
malformedSse, quotaName, quotaLimit, quotaWindowMillis, quotaErrorStatus, tokenQuotaLimit,
tokenQuotaWindowMillis, succeedFirst, failRequestCount, latency…), so a profile written for one reads the
same here. The same model is the chaos file's rules, the control API's per-host profiles, a mock turn's
`chaos` and the `x-llmproxy-chaos` header, and docs/chaos.schema.json is generated from it.

A profile is checked when it is read: a partial quota or an unknown field is a one-line error naming the
field, never a quota that silently does nothing.
"""

import re
from email.utils import parsedate_to_datetime
from enum import StrEnum
from functools import cached_property
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Latency(_Spec):
    """Delays, in milliseconds: `fixedMs` plus up to `jitterMs` (drawn from the seed) before the answer starts,
    `firstByteMs` before its first byte, and `perEventMs` before each later event of a stream."""

    fixedMs: float = Field(default=0, ge=0, le=600_000)
    jitterMs: float = Field(default=0, ge=0, le=600_000)
    firstByteMs: float = Field(default=0, ge=0, le=600_000)
    perEventMs: float = Field(default=0, ge=0, le=60_000)


class ModelFault(StrEnum):
    """Answers that test an agent rather than its HTTP stack: a well-formed reply that is wrong."""

    EMPTY = "empty"  # no text, no tool call
    REFUSAL = "refusal"  # the model declines (stop reason refusal)
    CONTENT_FILTER = "contentFilter"  # stopped by the provider's filter, mid-answer
    INVALID_TOOL_ARGUMENTS = "invalidToolArguments"  # a tool call whose arguments are not JSON
    UNKNOWN_TOOL = "unknownTool"  # a call to a tool the request did not offer
    MAX_TOKENS = "maxTokens"  # cut off by max_tokens mid-sentence


class ChaosProfile(_Spec):
    """Every field is optional; a profile with none does nothing. The order they apply in, per request: request
    quota → token quota → probabilistic error (and dropped connection, model fault) → stream faults."""

    # which of the requests the profile sees are eligible for its faults (quotas count every request)
    succeedFirst: int | None = Field(default=None, ge=0, description="the first N requests are never faulted")
    failRequestCount: int | None = Field(
        default=None, ge=1, description="after succeedFirst, only the next N are eligible; unset: all after"
    )

    # a fixed-window request quota, shared by every profile with the same quotaName
    quotaName: str | None = Field(default=None, min_length=1, description="counters shared by name")
    quotaLimit: int | None = Field(default=None, ge=1, description="requests allowed per window")
    quotaWindowMillis: int | None = Field(default=None, ge=1)
    quotaErrorStatus: int = Field(default=429, ge=400, le=599)

    # fixed-window token quotas (TPM: 60000 ms, TPD: 86400000 ms), charged with each answer's usage
    tokenQuotaLimit: int | None = Field(default=None, ge=1, description="input + output tokens per window")
    inputTokenQuotaLimit: int | None = Field(default=None, ge=1, description="input tokens per window")
    outputTokenQuotaLimit: int | None = Field(default=None, ge=1, description="output tokens per window")
    tokenQuotaWindowMillis: int | None = Field(default=None, ge=1)

    # an error instead of the answer
    errorStatus: int | None = Field(default=None, ge=400, le=599)
    errorProbability: float | None = Field(default=None, ge=0, le=1, description="unset: always, when errorStatus")
    errorMessage: str | None = None
    retryAfter: str | float | None = Field(
        default=None, description="seconds (a number, or its text) or an HTTP date, sent as retry-after"
    )
    seed: int | None = Field(default=None, description="makes every probability and jitter reproducible")

    # no answer at all
    connectionDrop: bool = Field(default=False, description="close the connection without an answer")
    dropConnectionProbability: float | None = Field(default=None, ge=0, le=1)

    # a well-formed answer that is wrong (answered by llmproxy, in the requesting API's format)
    modelFault: ModelFault | None = None
    modelFaultProbability: float | None = Field(default=None, ge=0, le=1, description="unset: always")

    # what happens to the answer's stream and body on the way
    truncateMode: Literal["NONE", "MID_STREAM"] | None = Field(
        default=None, description="MID_STREAM: cut the stream at truncateAtFraction (default 0.5)"
    )
    truncateAtFraction: float | None = Field(default=None, ge=0, le=1, description="of the stream's events kept")
    truncateAfterEvents: int | None = Field(default=None, ge=0, description="events kept before the cut")
    malformedSse: bool = Field(default=False, description="a broken-JSON event after malformedAfterEvents events")
    malformedAfterEvents: int = Field(default=1, ge=0)
    latency: Latency | None = None
    slowResponseChunkSize: int | None = Field(default=None, ge=1, description="bytes per piece of a dribbled body")
    slowResponseChunkDelayMs: float | None = Field(default=None, ge=0, le=60_000)

    @field_validator("retryAfter")
    @classmethod
    def _retry_after(cls, value: str | float | None) -> str | float | None:
        if isinstance(value, str):
            retry_after_text(value)  # raises ValueError saying what it expects
        elif value is not None and value < 0:
            raise ValueError("cannot be negative")
        return value

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if (self.quotaLimit is None) != (self.quotaWindowMillis is None):
            raise ValueError("a request quota needs both quotaLimit and quotaWindowMillis")
        token_limits = (self.tokenQuotaLimit, self.inputTokenQuotaLimit, self.outputTokenQuotaLimit)
        if any(limit is not None for limit in token_limits) != (self.tokenQuotaWindowMillis is not None):
            raise ValueError("a token quota needs a token limit and tokenQuotaWindowMillis")
        if self.errorProbability is not None and self.errorStatus is None:
            raise ValueError("errorProbability needs an errorStatus")
        if self.dropConnectionProbability is not None and self.connectionDrop:
            raise ValueError("give connectionDrop (always) or dropConnectionProbability, not both")
        if self.modelFaultProbability is not None and self.modelFault is None:
            raise ValueError("modelFaultProbability needs a modelFault")
        if (self.slowResponseChunkSize is None) != (self.slowResponseChunkDelayMs is None):
            raise ValueError("a slow body needs slowResponseChunkSize and slowResponseChunkDelayMs")
        return self

    # What a profile does, worked out once (it never changes) for the per-request path: cached properties,
    # which pydantic keeps out of equality and dumps.

    @cached_property
    def has_quota(self) -> bool:
        return self.quotaLimit is not None or self.tokenQuotaWindowMillis is not None

    @cached_property
    def faults(self) -> bool:
        """Whether it may refuse a request or answer it itself: a dropped connection, an error, a model fault."""
        return (
            self.connectionDrop
            or self.dropConnectionProbability is not None
            or self.errorStatus is not None
            or self.modelFault is not None
        )

    @cached_property
    def windowed(self) -> bool:
        """Whether succeedFirst / failRequestCount narrow which requests may be faulted."""
        return self.succeedFirst is not None or self.failRequestCount is not None

    @cached_property
    def truncation(self) -> float | int | None:
        """Where a stream is cut: a fraction of its events (float) or a count of events (int); None: not cut."""
        if self.truncateAfterEvents is not None:
            return self.truncateAfterEvents
        if self.truncateAtFraction is not None and self.truncateMode != "NONE":
            return self.truncateAtFraction
        return 0.5 if self.truncateMode == "MID_STREAM" else None

    @cached_property
    def shapes_answers(self) -> bool:
        """Whether anything here changes an answer that is let through (its stream, its timing)."""
        return (
            self.truncation is not None
            or self.malformedSse
            or self.latency is not None
            or self.slowResponseChunkSize is not None
        )


def merged(base: ChaosProfile, patch: dict[str, object]) -> ChaosProfile:
    """JSON Merge Patch (RFC 7396) of a profile: the fields `patch` names are replaced, a null removes one, an
    object merges into the object there; the result is checked like any profile (ValueError, pydantic's)."""
    document = merge_patch(base.model_dump(exclude_defaults=True, mode="json"), patch)
    return ChaosProfile.model_validate(document)


def merge_patch(target: object, patch: object) -> object:
    """RFC 7396: a patch that is not an object replaces the target; in one, null deletes a member."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for name, value in patch.items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = merge_patch(result.get(name), value)
    return result


_SECONDS = re.compile(r"\d+(\.\d+)?")


def retry_after_text(value: str) -> str:
    """A retry-after as sent: seconds ("30", "0.5") or an HTTP date; ValueError for anything else."""
    text = value.strip()
    if _SECONDS.fullmatch(text):
        return text
    try:
        parsedate_to_datetime(text)
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is neither seconds nor an HTTP date") from None
    return text
