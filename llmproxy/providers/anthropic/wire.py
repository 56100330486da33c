"""Anthropic's spellings of the neutral vocabulary: stop reasons, usage, cache breakpoints, tool input.

Shared by the request, response and stream modules so each mapping exists exactly once.
"""

from typing import Any, Final

from llmproxy.model import CacheControl, StopReason, ToolCall, Usage
from llmproxy.providers.base import JsonObject, dump_arguments, parse_arguments
from llmproxy.providers.node import Node

STOP_REASONS: Final[dict[str, StopReason]] = {
    "end_turn": StopReason.END_TURN,
    "max_tokens": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
    "tool_use": StopReason.TOOL_USE,
    "pause_turn": StopReason.PAUSE_TURN,
    "refusal": StopReason.REFUSAL,
    "model_context_window_exceeded": StopReason.CONTEXT_WINDOW_EXCEEDED,
}
# Neutral reasons Anthropic has no word for are sent as their nearest Anthropic reason.
_NEAREST: Final[dict[StopReason, StopReason]] = {
    StopReason.CONTENT_FILTER: StopReason.REFUSAL,
    StopReason.OTHER: StopReason.END_TURN,
}
_WIRE_STOP: Final[dict[StopReason, str]] = {reason: wire for wire, reason in STOP_REASONS.items()}

# Anthropic's documented way to carry tool input that is not a JSON object inside the (object-typed)
# `input` field (fine-grained tool streaming docs). Only streams can carry such text verbatim.
INVALID_JSON: Final = "INVALID_JSON"


def decode_stop(value: str | None) -> StopReason | None:
    if value is None:
        return None
    return STOP_REASONS.get(value, StopReason.OTHER)


def visible_stop(reason: StopReason | None) -> StopReason | None:
    return None if reason is None else _NEAREST.get(reason, reason)


def encode_stop(reason: StopReason | None) -> str | None:
    visible = visible_stop(reason)
    return None if visible is None else _WIRE_STOP[visible]


def decode_cache_control(node: Node) -> CacheControl | None:
    if not node.present:
        return None
    node.obj()
    return CacheControl(ttl=node["ttl"].opt_string())


# Usage ------------------------------------------------------------------------------------------
# Wire usage is kept as the raw Anthropic counters until the end, because a stream's message_delta
# overwrites individual counters (cumulative totals) and only the final set maps to neutral Usage.
_COUNTERS: Final = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def read_counters(usage: Node, into: dict[str, int]) -> None:
    """Overwrite `into` with every counter present (non-null) in a wire `usage` object."""
    if not usage.present:
        return
    usage.obj()
    for name in _COUNTERS:
        counter = usage[name]
        if counter.present:
            into[name] = counter.integer()
    thinking = usage["output_tokens_details"]["thinking_tokens"]
    if thinking.present:
        into["thinking_tokens"] = thinking.integer()
    hour = usage["cache_creation"]["ephemeral_1h_input_tokens"]
    if hour.present:
        into["cache_write_1h_tokens"] = hour.integer()


def neutral_usage(counters: dict[str, int]) -> Usage:
    """Anthropic's `input_tokens` excludes cache reads and writes; the neutral one includes them."""
    read = counters.get("cache_read_input_tokens", 0)
    write = counters.get("cache_creation_input_tokens", 0)
    return Usage(
        input_tokens=counters.get("input_tokens", 0) + read + write,
        output_tokens=counters.get("output_tokens", 0),
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=counters.get("thinking_tokens", 0),
        cache_write_1h_tokens=min(counters.get("cache_write_1h_tokens", 0), write),
    )


def wire_usage(usage: Usage, *, output_tokens: int | None = None) -> JsonObject:
    """The wire `usage` object; `output_tokens` overrides the count (message_start sends 1).
    `output_tokens_details` is only sent when there were reasoning tokens, as the API does."""
    wire: JsonObject = {
        "input_tokens": usage.uncached_input_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": usage.output_tokens if output_tokens is None else output_tokens,
    }
    if usage.reasoning_tokens and output_tokens is None:
        wire["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    if usage.cache_write_1h_tokens:  # the split by lifetime, sent only when some writes last an hour
        hour = min(usage.cache_write_1h_tokens, usage.cache_write_tokens)
        wire["cache_creation"] = {
            "ephemeral_5m_input_tokens": usage.cache_write_tokens - hour,
            "ephemeral_1h_input_tokens": hour,
        }
    return wire


def visible_usage(usage: Usage | None) -> Usage:
    """What survives the wire: no estimate flag, and input never below its cached share."""
    usage = usage or Usage()
    return Usage(
        input_tokens=max(usage.input_tokens, usage.cache_read_tokens + usage.cache_write_tokens),
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        cache_write_1h_tokens=min(usage.cache_write_1h_tokens, usage.cache_write_tokens),
    )


# Tool input -------------------------------------------------------------------------------------
def tool_arguments(value: Any) -> tuple[JsonObject, str | None]:
    """`(arguments, invalid_arguments)` from a decoded `input` object, undoing the INVALID_JSON wrapper.

    The wrapper only counts when its text really is not a JSON object; otherwise it is an ordinary
    argument that happens to have that name, so the mapping stays one-to-one."""
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get(INVALID_JSON), str):
        text: str = value[INVALID_JSON]
        if parse_arguments(text)[1] is not None:
            return {}, text
    return value, None


def parse_tool_json(text: str) -> tuple[JsonObject, str | None]:
    """`(arguments, invalid_arguments)` from streamed `partial_json` text."""
    arguments, invalid = parse_arguments(text)
    return (arguments, invalid) if invalid is not None else tool_arguments(arguments)


def visible_call(call: ToolCall) -> ToolCall:
    """A call as it comes back off the wire: arguments through JSON, no cache breakpoint."""
    arguments, invalid = parse_tool_json(dump_arguments(call))
    return ToolCall(id=call.id, name=call.name, arguments=arguments, invalid_arguments=invalid)


def wire_input(call: ToolCall) -> JsonObject:
    """The `input` object of a tool_use block in a non-streaming body."""
    arguments, invalid = parse_tool_json(dump_arguments(call))
    return arguments if invalid is None else {INVALID_JSON: invalid}
