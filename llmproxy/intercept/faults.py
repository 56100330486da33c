"""The kinds of fault llmproxy injects, and the record of one injection: what the end-of-run summary counts,
what a cassette marks on the exchange it changed, and what `llmproxy report` lists as "injected"."""

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from llmproxy.intercept.profile import ModelFault


class FaultKind(StrEnum):
    ERROR = "error"  # errorStatus (errorProbability)
    QUOTA = "quota"  # a request quota's window was full
    TOKEN_QUOTA = "token_quota"  # a token quota's window was spent
    BUDGET = "budget"  # the USD budget was spent
    DROP = "drop"  # the connection closed without an answer
    TRUNCATE = "truncate"  # the stream cut short, the connection dropped
    MALFORMED = "malformed"  # a broken-JSON event in the stream
    LATENCY = "latency"  # the answer held back
    SLOW_BODY = "slow_body"  # the body dribbled in small pieces
    EMPTY = "empty"
    REFUSAL = "refusal"
    CONTENT_FILTER = "content_filter"
    INVALID_TOOL_ARGUMENTS = "invalid_tool_arguments"
    UNKNOWN_TOOL = "unknown_tool"
    MAX_TOKENS = "max_tokens"

    @property
    def refuses(self) -> bool:
        """Whether the client got an error (or nothing) instead of an answer."""
        return self in _REFUSING

    @property
    def keeps_answer(self) -> bool:
        """Whether the client still got the whole answer, only later or more slowly than it came."""
        return self in _KEEPING

    @classmethod
    def of_model_fault(cls, fault: ModelFault) -> "FaultKind":
        return _OF_MODEL_FAULT[fault]


_REFUSING = frozenset({FaultKind.ERROR, FaultKind.QUOTA, FaultKind.TOKEN_QUOTA, FaultKind.BUDGET, FaultKind.DROP})
_KEEPING = frozenset({FaultKind.LATENCY, FaultKind.SLOW_BODY})
_STANDING_IN = frozenset(FaultKind) - _KEEPING - {FaultKind.TRUNCATE, FaultKind.MALFORMED}
STANDING_IN: Final = frozenset(kind.value for kind in _STANDING_IN)
"""The kinds of fault that stand in for an answer, as a cassette names them: an exchange marked with one holds
no answer of the provider's, only what llmproxy sent in its place."""
_OF_MODEL_FAULT = {
    ModelFault.EMPTY: FaultKind.EMPTY,
    ModelFault.REFUSAL: FaultKind.REFUSAL,
    ModelFault.CONTENT_FILTER: FaultKind.CONTENT_FILTER,
    ModelFault.INVALID_TOOL_ARGUMENTS: FaultKind.INVALID_TOOL_ARGUMENTS,
    ModelFault.UNKNOWN_TOOL: FaultKind.UNKNOWN_TOOL,
    ModelFault.MAX_TOKENS: FaultKind.MAX_TOKENS,
}


@dataclass(frozen=True, slots=True)
class Injected:
    """One fault put into one answer: its kind, the profile that did it ("rule 2", "host api.openai.com",
    "--fail", "x-llmproxy-chaos", "conversation 1 turn 3"), what exactly (`detail`), and the status and
    retry-after the client was sent, for errors."""

    kind: FaultKind
    rule: str
    detail: str
    status: int | None = None
    retry_after: float | None = None  # seconds

    def describe(self) -> str:
        return f"{self.kind.value}: {self.detail} ({self.rule})"

    def record(self) -> dict[str, Any]:
        """As a cassette keeps it on the exchange (`injected`: llmproxy.cassette.model.Injection)."""
        data: dict[str, Any] = {"kind": self.kind.value, "rule": self.rule, "detail": self.detail}
        if self.status is not None:
            data["status"] = self.status
        if self.retry_after is not None:
            data["retry_after_s"] = self.retry_after
        return data

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> "Injected":
        """Raises ValueError or KeyError for a record that is not one."""
        retry = data.get("retry_after_s")
        status = data.get("status")
        return cls(
            FaultKind(data["kind"]),
            str(data["rule"]),
            str(data.get("detail", "")),
            int(status) if status is not None else None,
            float(retry) if retry is not None else None,
        )
