"""Gemini's spellings of the neutral vocabulary: field names, finish reasons, usage, tool calls.

Shared by the request, response, stream and Code Assist modules so each mapping exists exactly once.
The API speaks proto-JSON, which accepts a field's camelCase and its proto snake_case name alike (and the
SDK mixes them on the wire: docs/providers.md#gemini), so every read goes through `get`; writes are camelCase.
"""

import re
from functools import cache
from typing import Final

from llmproxy.model import Completion, StopReason, ToolCall, Usage
from llmproxy.providers.base import JsonObject, dump_arguments, parse_arguments, stable_id
from llmproxy.providers.node import Node
from llmproxy.providers.usage_read import remembered

_UPPER: Final = re.compile(r"(?<!^)([A-Z])")


@cache
def snake(camel: str) -> str:
    """A camelCase field name's proto (snake_case) spelling."""
    return _UPPER.sub(r"_\1", camel).lower()


def get(node: Node, camel: str) -> Node:
    """The field under its camelCase or snake_case name (the first present)."""
    return node.first(camel, snake(camel))


# Finish reasons ---------------------------------------------------------------------------------
# Gemini ends a turn that calls tools with STOP: a tool call is read off the parts, not the reason.
_FINISH: Final[dict[str, StopReason]] = {
    "STOP": StopReason.END_TURN,
    "MAX_TOKENS": StopReason.MAX_TOKENS,
    "SAFETY": StopReason.CONTENT_FILTER,
    "RECITATION": StopReason.CONTENT_FILTER,
    "BLOCKLIST": StopReason.CONTENT_FILTER,
    "PROHIBITED_CONTENT": StopReason.CONTENT_FILTER,
    "SPII": StopReason.CONTENT_FILTER,
    "IMAGE_SAFETY": StopReason.CONTENT_FILTER,
    "IMAGE_PROHIBITED_CONTENT": StopReason.CONTENT_FILTER,
}
_ENCODED: Final[dict[StopReason, str]] = {
    StopReason.END_TURN: "STOP",
    StopReason.STOP_SEQUENCE: "STOP",
    StopReason.TOOL_USE: "STOP",
    StopReason.PAUSE_TURN: "STOP",
    StopReason.MAX_TOKENS: "MAX_TOKENS",
    StopReason.CONTEXT_WINDOW_EXCEEDED: "MAX_TOKENS",
    StopReason.CONTENT_FILTER: "SAFETY",
    StopReason.REFUSAL: "SAFETY",
    StopReason.OTHER: "OTHER",
}


def finish_reason(reason: StopReason | None) -> str | None:
    return None if reason is None else _ENCODED[reason]


def stop_reason(finish: str | None, has_tool_calls: bool) -> StopReason | None:
    """A finishReason as a StopReason: STOP with function calls is a tool use; unknown reasons
    (MALFORMED_FUNCTION_CALL, LANGUAGE, OTHER…) are OTHER."""
    if finish is None:
        return None
    reason = _FINISH.get(finish, StopReason.OTHER)
    return StopReason.TOOL_USE if reason is StopReason.END_TURN and has_tool_calls else reason


# Usage ------------------------------------------------------------------------------------------
@remembered
def decode_usage(node: Node) -> Usage | None:
    """`promptTokenCount` already includes cached tokens; thoughts are counted apart from the candidates
    (`candidatesTokenCount` excludes them) and are added to the neutral output. Tool-use prompt tokens
    (from built-in tools) are prompt tokens too."""
    if not node.present:
        return None
    node.obj()
    thoughts = get(node, "thoughtsTokenCount").opt_integer()
    return Usage(
        input_tokens=get(node, "promptTokenCount").opt_integer() + get(node, "toolUsePromptTokenCount").opt_integer(),
        output_tokens=get(node, "candidatesTokenCount").opt_integer() + thoughts,
        cache_read_tokens=get(node, "cachedContentTokenCount").opt_integer(),
        reasoning_tokens=thoughts,
    )


def visible_usage(usage: Usage) -> Usage:
    """What the wire can state: no cache writes (Gemini has no such count), input never below its cached
    share, reasoning never above the output it is part of, no estimate flag."""
    return Usage(
        input_tokens=max(usage.input_tokens, usage.cache_read_tokens),
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        reasoning_tokens=min(usage.reasoning_tokens, usage.output_tokens),
    )


def encode_usage(usage: Usage) -> JsonObject:
    """`usageMetadata` as the API sends it: cached and thought counts only when there are some."""
    usage = visible_usage(usage)
    wire: JsonObject = {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens - usage.reasoning_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
    }
    if usage.cache_read_tokens:
        wire["cachedContentTokenCount"] = usage.cache_read_tokens
    if usage.reasoning_tokens:
        wire["thoughtsTokenCount"] = usage.reasoning_tokens
    wire["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": usage.input_tokens}]
    return wire


# Tool calls -------------------------------------------------------------------------------------
def visible_call(call: ToolCall) -> ToolCall:
    """`functionCall.args` is a JSON object (a proto Struct): argument text that is not one cannot travel
    and is sent as no arguments. An empty id is sent as no id."""
    arguments, invalid = parse_arguments(dump_arguments(call))
    return ToolCall(call.id, call.name, arguments if invalid is None else {})


def encode_call(call: ToolCall) -> JsonObject:
    wire: JsonObject = {"name": call.name, "args": visible_call(call).arguments}
    if call.id:
        wire["id"] = call.id
    return wire


def decode_call(node: Node) -> ToolCall:
    node.obj()
    args = node["args"]
    return ToolCall(node["id"].opt_string() or "", node["name"].opt_string() or "", args.opt_obj() or {})


# Identity ---------------------------------------------------------------------------------------
def response_id(completion: Completion) -> str:
    """The completion's id, or one derived from its content (same content, same id)."""
    if completion.id:
        return completion.id
    c = completion
    return stable_id("", c.model, c.text, c.reasoning, c.reasoning_signature, c.tool_calls)


def model_version(completion: Completion, request: JsonObject | None) -> str:
    """The completion's model, else the one the request names (Code Assist bodies, or the URL's model the
    caller passes in), else ""."""
    if completion.model:
        return completion.model
    model = (request or {}).get("model")
    return model if isinstance(model, str) else ""
