"""Cohere chat requests as Conversations: v2 (`POST /v2/chat`, OpenAI-like messages) and v1 (`POST /v1/chat`,
the current `message` beside a `chat_history`, tools described by `parameter_definitions`, which the SDK's
`Client.chat` still sends).

v2's assistant `tool_plan` and `thinking` content are reasoning; tool results' `document` parts keep their
data as JSON text. The top-level `documents` (grounding for citations) are not messages: not in the
Conversation. v1 tool calls have no ids: calls and results are matched by name.
"""

from typing import Any, Final

import orjson

from llmproxy.model import (
    ContentPart,
    Conversation,
    ImagePart,
    Message,
    OtherPart,
    ReasoningPart,
    Role,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResultPart,
    name_tool_results,
)
from llmproxy.providers.base import latest_in, parse_arguments, role_count, split_data_url
from llmproxy.providers.node import Node, Parsed
from llmproxy.providers.tool_definitions import decode_tools

WHAT: Final = "cohere chat request"
_ROLES: Final = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM, "tool": Role.TOOL}
_V1_ROLES: Final = {"USER": Role.USER, "CHATBOT": Role.ASSISTANT, "SYSTEM": Role.SYSTEM, "TOOL": Role.TOOL}


def decode_request(body: bytes | Parsed) -> Conversation:
    root = Node.parse(body, WHAT)
    root.obj()
    if not root["messages"].is_list():
        raise root["messages"].fail("a list of messages")
    return Conversation(
        model=root["model"].opt_string(),
        messages=name_tool_results(tuple(_message(m) for m in root["messages"].items())),
        tools=decode_tools(root["tools"], _tool),
        stream=root["stream"].boolean(),
        max_output_tokens=root["max_tokens"].integer() if root["max_tokens"].present else None,
        reasoning_requested=root["thinking"]["type"].opt_string() == "enabled",
    )


def assistant_turns(body: Any) -> int:
    return role_count(body, "messages", "assistant")


def _message(node: Node) -> Message:
    role = _ROLES.get(node["role"].string())
    if role is None:
        raise node["role"].fail('"user", "assistant", "system" or "tool"')
    if role is Role.TOOL:
        result = ToolResultPart(node["tool_call_id"].string(), _content(node["content"]))
        return Message(role, (result,))
    parts: list[ContentPart] = []
    plan = node["tool_plan"].opt_string()
    if plan:
        parts.append(ReasoningPart(plan))
    parts += _content(node["content"])
    for call in node["tool_calls"].items():
        function = call["function"]
        arguments, invalid = parse_arguments(function["arguments"].opt_string() or "")
        parts.append(ToolCall(call["id"].string(), function["name"].string(), arguments, invalid))
    return Message(role, tuple(parts))


def _content(node: Node) -> tuple[ContentPart, ...]:
    if node.is_string():
        return (TextPart(node.string()),)
    return tuple(_part(part) for part in node.items())


def _part(node: Node) -> ContentPart:
    kind = node["type"].string()
    match kind:
        case "text":
            return TextPart(node["text"].string())
        case "thinking":
            return ReasoningPart(node["thinking"].string())
        case "image_url":
            image = node["image_url"]
            url = image["url"].string()
            inline = split_data_url(url)
            detail = image["detail"].opt_string()
            if inline is not None:
                return ImagePart(inline[0], data=inline[1], detail=detail)
            return ImagePart(url=url, detail=detail)
        case "document":  # its data as text: a string as sent, an object as JSON
            data = node["document"]["data"]
            return TextPart(data.string() if data.is_string() else orjson.dumps(data.obj()).decode())
        case _:
            return OtherPart(kind, node.obj())


def _tool(node: Node) -> ToolDefinition:
    function = node["function"]
    return ToolDefinition(
        function["name"].string(), function["description"].opt_string(), function["parameters"].opt_obj()
    )


# v1 ---------------------------------------------------------------------------------------------------
def decode_request_v1(body: bytes | Parsed) -> Conversation:
    root = Node.parse(body, WHAT)
    root.obj()
    messages = [_message_v1(m) for m in root["chat_history"].items()]
    results = tuple(_result_v1(r) for r in root["tool_results"].items())
    if results:
        messages.append(Message(Role.TOOL, results))
    text = root["message"].opt_string()
    if text:
        messages.append(Message(Role.USER, (TextPart(text),)))
    preamble = root["preamble"].opt_string()
    return Conversation(
        model=root["model"].opt_string(),
        messages=tuple(messages),
        system=(TextPart(preamble),) if preamble else (),
        tools=tuple(_tool_v1(t) for t in root["tools"].items()),
        stream=root["stream"].boolean(),
        max_output_tokens=root["max_tokens"].integer() if root["max_tokens"].present else None,
    )


def assistant_turns_v1(body: Any) -> int:
    return role_count(body, "chat_history", "CHATBOT")


def _message_v1(node: Node) -> Message:
    role = _V1_ROLES.get(node["role"].string())
    if role is None:
        raise node["role"].fail('"USER", "CHATBOT", "SYSTEM" or "TOOL"')
    if role is Role.TOOL:
        return Message(role, tuple(_result_v1(r) for r in node["tool_results"].items()))
    text = node["message"].opt_string()
    parts: list[ContentPart] = [TextPart(text)] if text else []
    parts += [call_v1(c) for c in node["tool_calls"].items()]
    return Message(role, tuple(parts))


def call_v1(node: Node) -> ToolCall:
    """A v1 tool call: a name and its parameters object, no id."""
    return ToolCall("", node["name"].string(), node["parameters"].opt_obj() or {})


def _result_v1(node: Node) -> ToolResultPart:
    call = call_v1(node["call"])
    outputs = TextPart(orjson.dumps([output.obj() for output in node["outputs"].items()]).decode())
    return ToolResultPart("", (outputs,), name=call.name)


def _tool_v1(node: Node) -> ToolDefinition:
    """`parameter_definitions` ({name: {type, description, required}}) as the JSON Schema it stands for."""
    definitions = node["parameter_definitions"]
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, spec in (definitions.opt_obj() or {}).items():
        spec = Node(spec, WHAT, name, definitions)
        properties[name] = {k: v for k, v in spec.obj().items() if k != "required"}
        if spec["required"].boolean():
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return ToolDefinition(node["name"].string(), node["description"].opt_string(), schema)


latest_message = latest_in("messages", WHAT, _message)
"""The last message alone (`ChatCodec.latest_message`)."""
