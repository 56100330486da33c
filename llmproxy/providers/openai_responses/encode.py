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
        "output": [] if in_progress else output_items(completion, request),
        **echo(_ECHOED_AFTER),
        **{key: deepcopy(sent[key]) for key in _ECHOED_IF_SENT if key in sent},
        "usage": None if in_progress or completion.usage is None else encode_usage(completion.usage),
        **echo(_ECHOED_LAST),
    }


def output_items(completion: Completion, request: JsonObject | None = None) -> list[JsonObject]:
    """The finished output items: the answer's `parts` in their order (kept items as they came), or else
    reasoning, message, function calls; a call of a member of one of `request`'s namespace tools names its
    namespace (`namespaced`)."""
    rid = response_id(completion)
    where = namespaced(request)
    return [_item(part, rid, index, where) for index, part in enumerate(completion.parts or _parts(completion))]


def _parts(completion: Completion) -> list[ContentPart]:
    parts: list[ContentPart] = []
    if completion.reasoning or completion.reasoning_signature is not None:
        parts.append(ReasoningPart(completion.reasoning or "", completion.reasoning_signature))
    if completion.text:
        parts.append(TextPart(completion.text))
    parts.extend(completion.tool_calls)
    return parts


def _item(part: ContentPart, rid: str, index: int, where: dict[str, tuple[str, str]]) -> JsonObject:
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
        namespace, name = where.get(part.name, (None, part.name))
        return call_item(
            item_id("fc_", rid, index), replace(part, name=name), dump_arguments(part), "completed", namespace
        )
    raise UnsupportedError(f"a Responses answer cannot hold a {type(part).__name__}")


def text_part(text: str) -> JsonObject:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def message_item(id_: str, text: str | None, state: str) -> JsonObject:
    """An assistant message; `text` None gives the empty skeleton `output_item.added` announces."""
    content = [] if text is None else [text_part(text)]
    return {"id": id_, "type": "message", "status": state, "content": content, "role": "assistant"}


def call_item(id_: str, call: ToolCall, arguments: str, state: str, namespace: str | None = None) -> JsonObject:
    item = {"id": id_, "type": "function_call", "status": state, "arguments": arguments, "call_id": call.id}
    return {**item, "name": call.name, **({"namespace": namespace} if namespace is not None else {})}


_PLAIN_FUNCTIONS = "functions"  # the namespace the Responses API calls plain function tools by


def namespaced(request: JsonObject | None) -> dict[str, tuple[str, str]]:
    """The calls of `request`'s namespace tools' members, by the name a script gives them: (namespace, member).

    The Responses API's `namespace` tool groups function tools (Codex CLI offers each MCP server's tools as
    one, `mcp__SERVER`); the model calls a member by its own name with the namespace beside it, and a client
    finds the tool by both. A script names it by its own name (`lookup`) when no other tool has that name,
    or qualified, namespace and name joined by `__` (`mcp__notes__lookup`, also Claude Code's name for an MCP
    tool; a namespace that already ends in `__` is joined as it stands). A name a top-level tool has is that
    tool's. The tools Codex sends in an `additional_tools` input item count too, where it groups its own
    tools in a namespace `functions`, the Responses API's name for plain functions: those are called as
    plain functions, as before."""
    top: set[str] = set()
    qualified: dict[str, tuple[str, str]] = {}
    holders: dict[str, list[str]] = {}
    for tool in _offered(request):
        namespace, members = tool.get("name"), _dicts(tool.get("tools"))
        if tool.get("type") != "namespace" or namespace == _PLAIN_FUNCTIONS:
            top.update(str(name) for name in [namespace] if tool.get("type") != "namespace")
            top.update(str(member.get("name")) for member in members if namespace == _PLAIN_FUNCTIONS)
            continue
        for name in (member.get("name") for member in members):
            if isinstance(namespace, str) and isinstance(name, str):
                qualified[namespace + name if namespace.endswith("__") else f"{namespace}__{name}"] = (namespace, name)
                holders.setdefault(name, []).append(namespace)
    alone = {name: (held[0], name) for name, held in holders.items() if len(held) == 1}
    return {name: where for name, where in (alone | qualified).items() if name not in top}


def _offered(request: JsonObject | None) -> list[JsonObject]:
    """The tools a request offers: its `tools`, and those of its `additional_tools` input items."""
    if not isinstance(request, dict):
        return []
    added = [item.get("tools") for item in _dicts(request.get("input")) if item.get("type") == "additional_tools"]
    return [tool for group in (request.get("tools"), *added) for tool in _dicts(group)]


def _dicts(value: Any) -> list[JsonObject]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


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
