"""Converse's spellings of the neutral vocabulary (docs/providers.md#aws-bedrock): stop reasons, usage, and the
event-stream frames both Bedrock codecs send. Shared so each mapping exists exactly once."""

from collections.abc import Iterable, Iterator
from typing import Final

from llmproxy.framing.eventstream import EventMessage, EventStreamDecoder, encode_event
from llmproxy.model import StopReason, Usage
from llmproxy.providers.anthropic.wire import visible_usage
from llmproxy.providers.base import JsonObject, dump_json
from llmproxy.providers.node import Node

STOP_REASONS: Final[dict[str, StopReason]] = {
    "end_turn": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
    "content_filtered": StopReason.CONTENT_FILTER,
    "model_context_window_exceeded": StopReason.CONTEXT_WINDOW_EXCEEDED,
    "malformed_model_output": StopReason.OTHER,
}
_DECODE_ONLY: Final = {"guardrail_intervened": StopReason.CONTENT_FILTER, "malformed_tool_use": StopReason.OTHER}
# Neutral reasons Converse has no word for are sent as their nearest Converse reason.
_NEAREST: Final = {StopReason.REFUSAL: StopReason.CONTENT_FILTER, StopReason.PAUSE_TURN: StopReason.END_TURN}
_WIRE_STOP: Final = {reason: wire for wire, reason in STOP_REASONS.items()}


def decode_stop(node: Node) -> StopReason | None:
    value = node.opt_string()
    if value is None:
        return None
    return STOP_REASONS.get(value) or _DECODE_ONLY.get(value, StopReason.OTHER)


def visible_stop(reason: StopReason | None) -> StopReason | None:
    return None if reason is None else _NEAREST.get(reason, reason)


def stop_member(reason: StopReason | None) -> JsonObject:
    """`{"stopReason": …}`, or nothing when the completion has no stop reason."""
    visible = visible_stop(reason)
    return {} if visible is None else {"stopReason": _WIRE_STOP[visible]}


def wire_usage(usage: Usage) -> JsonObject:
    """`inputTokens` counts the uncached prompt; `totalTokens` the whole prompt plus the output. Cache
    counters are sent when there was caching, as Bedrock does."""
    wire: JsonObject = {
        "inputTokens": usage.uncached_input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens + usage.output_tokens,
    }
    if usage.cache_read_tokens:
        wire["cacheReadInputTokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        wire["cacheWriteInputTokens"] = usage.cache_write_tokens
    return wire


def read_usage(node: Node) -> Usage | None:
    if not node.present:
        return None
    node.obj()
    read = node["cacheReadInputTokens"].opt_integer()
    write = node["cacheWriteInputTokens"].opt_integer()
    return Usage(
        input_tokens=node["inputTokens"].opt_integer() + read + write,
        output_tokens=node["outputTokens"].opt_integer(),
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def converse_usage(usage: Usage | None) -> Usage:
    """What Converse usage carries back: no reasoning count, no estimate flag."""
    visible = visible_usage(usage)
    return Usage(visible.input_tokens, visible.output_tokens, visible.cache_read_tokens, visible.cache_write_tokens)


# -- event-stream framing ------------------------------------------------------------------------------


def event_frame(event_type: str, payload: JsonObject) -> bytes:
    """One event as Bedrock frames it: the union member's name in `:event-type`, JSON payload."""
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    return encode_event(headers, dump_json(payload))


def messages(chunks: Iterable[bytes]) -> Iterator[EventMessage]:
    """The stream's complete messages (one cut off by the end never reached a client either)."""
    decoder = EventStreamDecoder()
    for chunk in chunks:
        yield from decoder.feed(chunk)
    decoder.close()
