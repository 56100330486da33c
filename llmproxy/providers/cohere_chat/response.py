"""Cohere v2 chat answers (`POST /v2/chat` without `stream`), both ways.

`message.content` holds `text` and `thinking` items; `tool_plan` (the plan a model writes before calling
tools) is reasoning too. Encoding puts reasoning in a `thinking` item, or in `tool_plan` when the answer
calls tools, as Cohere's models do. An answer that failed is sent as Cohere's error body alone.
"""

from typing import Final

from llmproxy.model import Completion, ToolCall
from llmproxy.providers import message_parts
from llmproxy.providers.base import JsonObject, dump_arguments, dump_json, parse_arguments, stable_id
from llmproxy.providers.cohere_chat import wire
from llmproxy.providers.node import Node, Parsed

WHAT: Final = "cohere chat response"
NEUTRAL: Final = frozenset({"role", "tool_plan", "tool_calls"})
"""The message fields a Completion says; any other set one (`citations`…) is kept whole."""
KNOWN_ITEMS: Final = frozenset({"text", "thinking"})
"""The content items a Completion says; a list holding any other is kept item by item."""


def answer_id(completion: Completion) -> str:
    if completion.id:
        return completion.id
    c = completion
    return stable_id("", c.model, c.text, c.reasoning, c.tool_calls)


def plan_reasoning(completion: Completion) -> bool:
    """Whether the reasoning travels as `tool_plan` (the answer calls tools) rather than a thinking item."""
    return bool(completion.reasoning) and bool(completion.tool_calls)


def tool_call(call: ToolCall) -> JsonObject:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": dump_arguments(call)}}


def encode_response(completion: Completion, request: JsonObject | None = None) -> bytes:
    del request
    if completion.error is not None:
        return wire.encode_error(completion.error.kind, completion.error.message).body
    content: list[JsonObject] = []
    message: JsonObject = {"role": "assistant"}
    if completion.reasoning and not plan_reasoning(completion):
        content.append({"type": "thinking", "thinking": completion.reasoning})
    if completion.text:
        content.append({"type": "text", "text": completion.text})
    if plan_reasoning(completion):
        message["tool_plan"] = completion.reasoning
    if completion.tool_calls:
        message["tool_calls"] = [tool_call(call) for call in completion.tool_calls]
    if content:
        message["content"] = content
    message_parts.write(message, completion.parts)
    body: JsonObject = {
        "id": answer_id(completion),
        "message": message,
        "finish_reason": wire.encode_stop(completion.stop_reason),
    }
    if completion.usage is not None:
        body["usage"] = wire.encode_usage(completion.usage)
    return dump_json(body)


def decode_response(body: bytes | Parsed) -> Completion:
    root = Node.parse(body, WHAT)
    root.obj()
    error = wire.body_error(root)
    if error is not None:
        return Completion(stop_reason=None, error=error)
    message = root["message"]
    text: list[str] = []
    reasoning: list[str] = []
    for item in message["content"].items():
        kind = item["type"].opt_string()
        if kind == "thinking":
            reasoning.append(item["thinking"].string())
        elif item["text"].is_string():  # "text", and kinds yet unknown that carry text
            text.append(item["text"].string())
    plan = message["tool_plan"].opt_string()
    if plan:
        reasoning.append(plan)
    calls = tuple(read_call(call) for call in message["tool_calls"].items())
    finish = root["finish_reason"].opt_string()
    return Completion(
        id=root["id"].opt_string(),
        text="".join(text),
        tool_calls=calls,
        stop_reason=wire.decode_stop(finish),
        reasoning="\n\n".join(reasoning) or None,
        usage=wire.decode_usage(root["usage"]),
        parts=message_parts.read(message.obj(), NEUTRAL, KNOWN_ITEMS),
    )


def read_call(node: Node) -> ToolCall:
    function = node["function"]
    arguments, invalid = parse_arguments(function["arguments"].opt_string() or "")
    return ToolCall(node["id"].opt_string() or "", function["name"].opt_string() or "", arguments, invalid)
