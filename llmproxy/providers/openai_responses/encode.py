"""Completion → Responses response object and output items (docs/providers.md#openai-responses), and what survives it.

The stream encoder reuses these items: each is streamed as its `output_item.added` skeleton, deltas, and
the full item in `output_item.done`, so the body and the stream can never disagree.
"""

from copy import deepcopy
from dataclasses import replace
from typing import Any

from llmproxy.errors import UnsupportedError
from llmproxy.model import Completion, ContentPart, OtherPart, ProviderError, ReasoningPart, TextPart, ToolCall
from llmproxy.providers.base import JsonObject, dump_arguments, dump_json, parse_arguments
from llmproxy.providers.openai_responses.common import (
    INCOMPLETE_STOPS,
    encode_usage,
    error_code,
    item_id,
    natural_stop,
    response_id,
)

# Request fields the API echoes into the response object, with the value it reports when they were not
# sent, in the API's key order: the first group before "model", the second after "output".
_ECHOED_BEFORE: dict[str, Any] = {"instructions": None, "max_output_tokens": None, "max_tool_calls": None}
_ECHOED_AFTER: dict[str, Any] = {
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "prompt_cache_key": None,
    "reasoning": {"effort": None, "summary": None},
    "safety_identifier": None,
    "service_tier": "default",
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "tool_choice": "auto",
    "tools": [],
    "top_logprobs": 0,
    "top_p": 1.0,
    "truncation": "disabled",
}
_ECHOED_LAST: dict[str, Any] = {"user": None, "metadata": {}}
_ECHOED_IF_SENT = ("conversation", "prompt", "prompt_cache_retention")


def encode_response(completion: Completion, request: JsonObject | None = None) -> bytes:
    return dump_json(response_object(completion, request))


def _status(completion: Completion) -> str:
    if completion.error is not None:
        return "failed"
    return "incomplete" if completion.stop_reason in INCOMPLETE_STOPS else "completed"


def response_object(
    completion: Completion, request: JsonObject | None = None, *, in_progress: bool = False
) -> JsonObject:
    """The response object; `in_progress` gives the snapshot `response.created` carries (no output yet)."""
    sent = request or {}

    def echo(defaults: dict[str, Any]) -> JsonObject:
        return {key: deepcopy(sent.get(key, default)) for key, default in defaults.items()}

    state = "in_progress" if in_progress else _status(completion)
    stop = completion.stop_reason
    return {
        "id": response_id(completion),
        "object": "response",
        "created_at": completion.created or 0,
        "status": state,
        "background": deepcopy(sent.get("background", False)),
        "error": _error(completion.error) if state == "failed" and completion.error else None,
        "incomplete_details": {"reason": INCOMPLETE_STOPS[stop]} if state == "incomplete" and stop else None,
        **echo(_ECHOED_BEFORE),
        "model": sent.get("model") if completion.model is None else completion.model,
        "output": [] if in_progress else output_items(completion),
        **echo(_ECHOED_AFTER),
        **{key: deepcopy(sent[key]) for key in _ECHOED_IF_SENT if key in sent},
        "usage": None if in_progress or completion.usage is None else encode_usage(completion.usage),
        **echo(_ECHOED_LAST),
    }


def output_items(completion: Completion) -> list[JsonObject]:
    """The finished output items: the answer's `parts` in their order (kept items as they came), or else
    reasoning, message, function calls."""
    rid = response_id(completion)
    return [_item(part, rid, index) for index, part in enumerate(completion.parts or _parts(completion))]


def _parts(completion: Completion) -> list[ContentPart]:
    parts: list[ContentPart] = []
    if completion.reasoning or completion.reasoning_signature is not None:
        parts.append(ReasoningPart(completion.reasoning or "", completion.reasoning_signature))
    if completion.text:
        parts.append(TextPart(completion.text))
    parts.extend(completion.tool_calls)
    return parts


def _item(part: ContentPart, rid: str, index: int) -> JsonObject:
    if isinstance(part, OtherPart):
        return part.raw
    if isinstance(part, ReasoningPart):
        summary = [{"type": "summary_text", "text": part.text}] if part.text else []
        reasoning: JsonObject = {"id": part.id or item_id("rs_", rid, index), "type": "reasoning", "summary": summary}
        if part.signature is not None:
            reasoning["encrypted_content"] = part.signature
        return reasoning
    if isinstance(part, TextPart):
        return message_item(item_id("msg_", rid, index), part.text, "completed")
    if isinstance(part, ToolCall):
        return call_item(item_id("fc_", rid, index), part, dump_arguments(part), "completed")
    raise UnsupportedError(f"a Responses answer cannot hold a {type(part).__name__}")


def text_part(text: str) -> JsonObject:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def message_item(id_: str, text: str | None, state: str) -> JsonObject:
    """An assistant message; `text` None gives the empty skeleton `output_item.added` announces."""
    content = [] if text is None else [text_part(text)]
    return {"id": id_, "type": "message", "status": state, "content": content, "role": "assistant"}


def call_item(id_: str, call: ToolCall, arguments: str, state: str) -> JsonObject:
    return {
        "id": id_,
        "type": "function_call",
        "status": state,
        "arguments": arguments,
        "call_id": call.id,
        "name": call.name,
    }


def _error(error: ProviderError) -> JsonObject:
    return {"code": error_code(error), "message": error.message}


def visible(completion: Completion) -> Completion:
    """What the Responses wire keeps: stop reasons other than max tokens and content filter follow from the
    output, an error carries only its code and message, and a missing id or timestamp gets the one sent."""
    error = completion.error
    if error is not None:
        error = ProviderError(error.kind, error.message, error_code(error))
    shown = Completion(
        id=response_id(completion),
        model=completion.model,
        created=completion.created or 0,
        text=completion.text,
        tool_calls=tuple(
            ToolCall(call.id, call.name, *parse_arguments(dump_arguments(call))) for call in completion.tool_calls
        ),
        reasoning=completion.reasoning or None,
        reasoning_signature=completion.reasoning_signature,
        usage=replace(completion.usage, estimated=False) if completion.usage is not None else None,
        error=error,
        stop_reason=None,
    )
    if error is not None:
        return shown
    stop = completion.stop_reason
    return replace(shown, stop_reason=stop if stop in INCOMPLETE_STOPS else natural_stop(shown))
