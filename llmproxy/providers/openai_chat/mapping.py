"""Neutral values ⇄ Chat Completions fields, shared by the body and the stream codecs.

Both directions live side by side so that `visible()` can be stated in terms of what these functions
keep: finish reasons, usage, tool calls, the chunk/body header (id, created, model) and in-band errors.
"""

from typing import Any

from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers import openai_errors
from llmproxy.providers.base import JsonObject, dump_arguments, parse_arguments, stable_id, status_kind
from llmproxy.providers.node import Node
from llmproxy.providers.usage_read import remembered

WHAT_RESPONSE = "openai chat response"
WHAT_STREAM = "openai chat stream"

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_TOKENS,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "content_filter": StopReason.CONTENT_FILTER,
}

# Neutral reasons the wire has no word for are sent as their closest finish_reason.
_ENCODED_REASONS: dict[StopReason, str] = {
    StopReason.END_TURN: "stop",
    StopReason.STOP_SEQUENCE: "stop",
    StopReason.PAUSE_TURN: "stop",
    StopReason.OTHER: "stop",
    StopReason.REFUSAL: "stop",  # the refusal itself travels in `message.refusal`
    StopReason.MAX_TOKENS: "length",
    StopReason.CONTEXT_WINDOW_EXCEEDED: "length",
    StopReason.TOOL_USE: "tool_calls",
    StopReason.CONTENT_FILTER: "content_filter",
}


def _error_kinds() -> tuple[dict[tuple[str | None, str | None], ErrorKind], dict[str, ErrorKind], dict[str, ErrorKind]]:
    """(type, code), code and type → kind, read off the shared error table so both directions stay in step."""
    by_pair: dict[tuple[str | None, str | None], ErrorKind] = {}
    by_code: dict[str, ErrorKind] = {}
    by_type: dict[str, ErrorKind] = {}
    for kind in ErrorKind:
        inner = Node.parse(openai_errors.encode_error(kind, "").body, "openai error")["error"]
        type_, code = inner["type"].opt_string(), inner["code"].opt_string()
        by_pair[(type_, code)] = kind
        if code is not None:
            by_code.setdefault(code, kind)
        if type_ is not None:
            by_type.setdefault(type_, kind)
    return by_pair, by_code, by_type


# In-band errors carry no status: their kind is read back from (type, code), else code, else type.
_KIND_BY_PAIR, _KIND_BY_CODE, _KIND_BY_TYPE = _error_kinds()


def finish_reason(stop: StopReason) -> str:
    return _ENCODED_REASONS[stop]


def stop_reason(finish: str | None, refused: bool) -> StopReason | None:
    """A finish_reason as a StopReason; "stop" with a refusal is a refusal. Unknown strings are OTHER."""
    if finish is None:
        return None
    reason = _FINISH_REASONS.get(finish, StopReason.OTHER)
    return StopReason.REFUSAL if refused and reason is StopReason.END_TURN else reason


def header(completion: Completion, request: JsonObject | None) -> tuple[str, int, str]:
    """id, created and model as sent: a missing id is derived from the content (deterministic), a missing
    created is 0, a missing model comes from the request, else ""."""
    ident = completion.id
    if ident is None:
        ident = stable_id("chatcmpl-", completion.model, completion.created, completion.text, completion.tool_calls)
    model = completion.model or (request or {}).get("model")
    return ident, completion.created or 0, model if isinstance(model, str) else ""


def encode_usage(usage: Usage) -> JsonObject:
    prompt_details: JsonObject = {"cached_tokens": usage.cache_read_tokens, "audio_tokens": 0}
    if usage.cache_write_tokens:
        prompt_details["cache_write_tokens"] = usage.cache_write_tokens
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": prompt_details,
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


@remembered
def decode_usage(node: Node) -> Usage | None:
    """OpenAI's counts already have the neutral meaning: prompt_tokens includes cached tokens. Compatible
    servers differ: DeepSeek may report cache hits only as `prompt_cache_hit_tokens`; xAI and Gemini's
    OpenAI-compatible API leave reasoning out of `completion_tokens` but count it in `total_tokens`, so
    whatever the total holds beyond prompt and completion is reasoning the output includes."""
    if not node.present:
        return None
    counts = node.obj()
    inputs, outputs = _count(counts, "prompt_tokens", node), _count(counts, "completion_tokens", node)
    completion = _details(counts, "completion_tokens_details", node, "reasoning_tokens")
    reasoning = _count(completion, "reasoning_tokens", node, "completion_tokens_details")
    prompt = _details(counts, "prompt_tokens_details", node, "cached_tokens")
    total = counts.get("total_tokens")
    hidden = _count(counts, "total_tokens", node) - inputs - outputs if total is not None else 0
    cached = (
        _count(prompt, "cached_tokens", node, "prompt_tokens_details")
        if prompt.get("cached_tokens") is not None
        else _count(counts, "prompt_cache_hit_tokens", node)
    )
    return Usage(
        input_tokens=inputs,
        output_tokens=outputs + max(hidden, 0),
        cache_read_tokens=cached,
        cache_write_tokens=_count(prompt, "cache_write_tokens", node, "prompt_tokens_details"),
        reasoning_tokens=max(reasoning, hidden),
    )


def _count(values: dict[str, Any], key: str, node: Node, *within: str) -> int:
    """`node[*within][key].opt_integer()` of the object `values` is: a count read straight off the object when it
    is a plain integer or absent (every usage has several, and a gate reads thousands of usages), else through
    the node, which reads a whole float and names where anything else is."""
    value = values.get(key)
    if value is None:
        return 0
    if type(value) is int:
        return value
    for step in within:
        node = node[step]
    return node[key].opt_integer()


def _details(values: dict[str, Any], key: str, node: Node, reading: str) -> dict[str, Any]:
    """The object at `key` (empty when absent), as `node[key][reading]` reads it: anything else there fails."""
    value = values.get(key)
    if value is None:
        return {}
    if type(value) is dict:
        return value
    raise node[key].fail(f"an object with {reading!r}")


def encode_tool_call(call: ToolCall) -> JsonObject:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": dump_arguments(call)}}


def decode_tool_call(node: Node) -> ToolCall:
    """A function call, or a custom tool call whose free-text `input` stands in for the arguments."""
    node.obj()
    custom = node["type"].value == "custom"
    body = node["custom"] if custom else node["function"]
    arguments = body["input"] if custom else body["arguments"]
    parsed, invalid = parse_arguments(arguments.opt_string() or "")
    return ToolCall(node["id"].opt_string() or "", body["name"].opt_string() or "", parsed, invalid)


def encode_stream_error(error: ProviderError) -> bytes:
    """The in-band error object (`{"error": {...}}`), the same body an HTTP error of that kind carries."""
    return openai_errors.encode_error(error.kind, error.message).body


def decode_stream_error(data: Any, what: str) -> ProviderError:
    """A data object with a truthy top-level `error`. In-band errors have no HTTP status, so `status` is
    None; a bare string error (not OpenAI's shape, but the SDK raises on it too) is its own message."""
    error = Node(data, what)["error"]
    if not isinstance(error.value, dict):
        return ProviderError(ErrorKind.SERVER_ERROR, error.value if isinstance(error.value, str) else "")
    message = error["message"].value if error["message"].is_string() else ""
    type_ = error["type"].value if error["type"].is_string() else None
    code = error["code"].value if error["code"].is_string() else None
    status = error["code"].value if isinstance(error["code"].value, int) else None  # OpenRouter: an HTTP status
    kind = (
        _KIND_BY_PAIR.get((type_, code))
        or _KIND_BY_CODE.get(code or "")
        or _KIND_BY_TYPE.get(type_ or "")
        or (status_kind(status) if status is not None else ErrorKind.SERVER_ERROR)
    )
    return ProviderError(kind, message, type_ or code, None)
