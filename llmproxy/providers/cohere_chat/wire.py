"""Cohere's spellings of the neutral vocabulary, shared by v2 and v1 chat: finish reasons, usage, errors and
rate-limit headers.

Usage: Cohere reports `billed_units` (what it charges: the prompt without its own template, and the answer)
beside `tokens` (what the model saw) and `cached_tokens` (of `tokens`, price-neutral: no Cohere model prices a
cache read apart). `Usage` holds the billed counts, the ones prices apply to; `tokens` stands in only when
nothing is billed. v2 sends them as `usage`, v1 as `meta`.
"""

from datetime import datetime
from typing import Final

from llmproxy.model import ErrorKind, ProviderError, StopReason, Usage
from llmproxy.providers.base import JsonObject, RateLimits, retry_after_headers
from llmproxy.providers.node import Node
from llmproxy.providers.vector_errors import COHERE_ERRORS

decode_error = COHERE_ERRORS.decode_error
encode_error = COHERE_ERRORS.encode_error

STOP_REASONS: Final[dict[str, StopReason]] = {
    "COMPLETE": StopReason.END_TURN,
    "STOP_SEQUENCE": StopReason.STOP_SEQUENCE,
    "MAX_TOKENS": StopReason.MAX_TOKENS,
    "TOOL_CALL": StopReason.TOOL_USE,
    "ERROR_TOXIC": StopReason.CONTENT_FILTER,  # v1
    "ERROR_LIMIT": StopReason.CONTEXT_WINDOW_EXCEEDED,  # v1
}
_WIRE: Final[dict[StopReason, str]] = {
    StopReason.END_TURN: "COMPLETE",
    StopReason.STOP_SEQUENCE: "STOP_SEQUENCE",
    StopReason.MAX_TOKENS: "MAX_TOKENS",
    StopReason.CONTEXT_WINDOW_EXCEEDED: "MAX_TOKENS",
    StopReason.TOOL_USE: "TOOL_CALL",
}
ERROR_REASONS: Final = frozenset({"ERROR", "TIMEOUT", "USER_CANCEL"})
"""Finish reasons of an answer that failed: its message (v2 `message-end.delta.error`) is the error."""


def body_error(root: Node) -> ProviderError | None:
    """An error body (`{"message": …}`) where an answer was expected: its kind unknown without the status."""
    if root["message"].is_string() and not root["id"].present and not root["response_id"].present:
        return ProviderError(ErrorKind.SERVER_ERROR, root["message"].string())
    return None


def decode_stop(value: str | None) -> StopReason | None:
    if value is None or value in ERROR_REASONS:
        return None
    return STOP_REASONS.get(value, StopReason.OTHER)


def encode_stop(reason: StopReason | None) -> str:
    """v2's finish reason; reasons Cohere has no word for end the turn (COMPLETE)."""
    return _WIRE.get(reason, "COMPLETE") if reason is not None else "COMPLETE"


def visible_stop(reason: StopReason | None) -> StopReason | None:
    """What comes back: every answer names a finish reason (none given is COMPLETE)."""
    return decode_stop(encode_stop(reason))


def decode_usage(node: Node) -> Usage | None:
    """`usage` (v2) or `meta` (v1) as Usage: billed counts, else the model's own (see the module doc)."""
    if not node.present:
        return None
    node.obj()
    billed, tokens = node["billed_units"], node["tokens"]
    if not billed.present and not tokens.present:
        return None
    counts = billed if billed["input_tokens"].present or billed["output_tokens"].present else tokens
    return Usage(input_tokens=counts["input_tokens"].opt_integer(), output_tokens=counts["output_tokens"].opt_integer())


def encode_usage(usage: Usage) -> JsonObject:
    counts = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    return {"billed_units": dict(counts), "tokens": dict(counts)}


def visible_usage(usage: Usage | None) -> Usage | None:
    """Only input and output travel; cache and reasoning counts do not."""
    return None if usage is None else Usage(usage.input_tokens, usage.output_tokens)


def rate_limit_headers(limits: RateLimits, now: datetime) -> dict[str, str]:
    """Cohere counts calls, not tokens: a key's calls per minute (`x-trial-endpoint-call-limit`, what is left
    of them) and per month (`x-endpoint-monthly-call-limit`, not in the neutral state: not sent)."""
    del now
    headers: dict[str, str] = {}
    if limits.requests_limit is not None:
        headers["x-trial-endpoint-call-limit"] = str(limits.requests_limit)
    if limits.requests_remaining is not None:
        headers["x-trial-endpoint-call-remaining"] = str(limits.requests_remaining)
    headers.update(retry_after_headers(limits.retry_after))
    return headers
