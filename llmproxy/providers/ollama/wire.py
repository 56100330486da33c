"""Ollama's spellings of the neutral vocabulary (docs/providers.md#ollama): done reasons, counts and durations,
`created_at` instants and tool calls with object arguments. Shared by the request, body and stream modules.
"""

from datetime import UTC, datetime, timedelta
from typing import Final

from llmproxy.model import Completion, StopReason, ToolCall, Usage
from llmproxy.providers.base import JsonObject, dump_arguments, parse_arguments
from llmproxy.providers.node import Node

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_LAST_SECOND: Final = 253_402_300_799  # 9999-12-31T23:59:59Z, the last instant RFC 3339 can write
GO_ZERO_TIME: Final = "0001-01-01T00:00:00Z"  # what Ollama's Go server writes for a time it does not know
_CUT_SHORT: Final = frozenset({StopReason.MAX_TOKENS, StopReason.CONTEXT_WINDOW_EXCEEDED})

# Ollama states timings in nanoseconds and llmproxy has none: it states plausible ones derived from the
# counts (never zero, so clients that print tokens per second do not divide by zero).
LOAD_NS: Final = 1_000_000
PROMPT_NS_PER_TOKEN: Final = 250_000
EVAL_NS_PER_TOKEN: Final = 20_000_000


# Identity -----------------------------------------------------------------------------------------
def visible_created(created: int | None) -> int | None:
    """`created` as `created_at` can carry it: unix seconds from 1970 to the year 9999, else unknown."""
    return created if created is not None and 0 <= created <= _LAST_SECOND else None


def encode_created(created: int | None) -> str:
    seconds = visible_created(created)
    if seconds is None:
        return GO_ZERO_TIME
    return (_EPOCH + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def decode_created(node: Node) -> int | None:
    """Unix seconds (rounded down) of an RFC 3339 instant; None for Go's zero time and anything before 1970."""
    if not node.present:
        return None
    try:
        instant = datetime.fromisoformat(node.string())
    except ValueError:
        raise node.fail("an RFC 3339 time") from None
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    seconds = (instant - _EPOCH) // timedelta(seconds=1)
    return seconds if seconds >= 0 else None


def model_name(completion: Completion, request: JsonObject | None) -> str:
    """The completion's model, else the one the request asked for ("" when neither says)."""
    if completion.model:
        return completion.model
    model = (request or {}).get("model")
    return model if isinstance(model, str) else ""


# Done reasons -------------------------------------------------------------------------------------
def encode_stop(reason: StopReason) -> str:
    """Ollama says "length" for a cut answer and "stop" for every other end, tool calls included."""
    return "length" if reason in _CUT_SHORT else "stop"


def decode_stop(done_reason: str | None, *, tool_calls: bool) -> StopReason | None:
    match done_reason:
        case None:
            return None
        case "stop":
            return StopReason.TOOL_USE if tool_calls else StopReason.END_TURN
        case "length":
            return StopReason.MAX_TOKENS
        case _:  # "load", "unload" and future reasons
            return StopReason.OTHER


def visible_stop(reason: StopReason | None, *, tool_calls: bool) -> StopReason | None:
    return None if reason is None else decode_stop(encode_stop(reason), tool_calls=tool_calls)


# Counts and durations ---------------------------------------------------------------------------
def encode_metrics(usage: Usage | None) -> JsonObject:
    """The final object's counts and nanosecond durations; nothing when usage is unknown."""
    if usage is None:
        return {}
    prompt_ns = max(1, usage.input_tokens) * PROMPT_NS_PER_TOKEN
    eval_ns = max(1, usage.output_tokens) * EVAL_NS_PER_TOKEN
    return {
        "total_duration": LOAD_NS + prompt_ns + eval_ns,
        "load_duration": LOAD_NS,
        "prompt_eval_count": usage.input_tokens,
        "prompt_eval_duration": prompt_ns,
        "eval_count": usage.output_tokens,
        "eval_duration": eval_ns,
    }


def decode_usage(node: Node) -> Usage | None:
    """`prompt_eval_count` is the prompt, `eval_count` the answer (thinking included); no other counts."""
    prompt, output = node["prompt_eval_count"], node["eval_count"]
    if not prompt.present and not output.present:
        return None
    return Usage(input_tokens=prompt.opt_integer(), output_tokens=output.opt_integer())


def visible_usage(usage: Usage | None) -> Usage | None:
    return None if usage is None else Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)


# Tool calls ---------------------------------------------------------------------------------------
def visible_call(call: ToolCall) -> ToolCall:
    """Arguments travel as a JSON object: text that is not one cannot be sent, and arrives as `{}`."""
    return ToolCall(call.id, call.name, parse_arguments(dump_arguments(call))[0])


def encode_tool_call(call: ToolCall) -> JsonObject:
    """`{"id"?, "function": {"name", "arguments": {...}}}`; the id is left out when empty, as Go's omitempty does."""
    function = {"name": call.name, "arguments": visible_call(call).arguments}
    return {"id": call.id, "function": function} if call.id else {"function": function}


def decode_tool_call(node: Node) -> ToolCall:
    function = node["function"]
    arguments = function["arguments"]
    return ToolCall(node["id"].opt_string() or "", function["name"].string(), dict(arguments.opt_obj() or {}))
