"""The `POST /v1/chat/completions` request body as a Conversation (docs/providers.md#openai-chat-completions).

System and developer messages stay in the message list, where the client put them; tool results become
TOOL messages holding a ToolResultPart, named after the call they answer.
"""

from llmproxy.model import (
    AudioPart,
    ContentPart,
    Conversation,
    DocumentPart,
    ImagePart,
    Message,
    OtherPart,
    Role,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResultPart,
    name_tool_results,
)
from llmproxy.providers.base import latest_in, parse_arguments, split_data_url
from llmproxy.providers.node import Node, Parsed
from llmproxy.providers.openai_chat.mapping import decode_tool_call

WHAT = "openai chat request"

_ROLES = {
    "system": Role.SYSTEM,
    "developer": Role.DEVELOPER,
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
    "tool": Role.TOOL,
    "function": Role.TOOL,  # legacy function results
}


def decode_request(body: bytes | Parsed) -> Conversation:
    root = Node.parse(body, WHAT)
    root.obj()
    tools = [_tool(tool) for tool in root["tools"].items()]
    tools.extend(_function(function) for function in root["functions"].items())
    limit = root.first("max_completion_tokens", "max_tokens")
    effort = root["reasoning_effort"].opt_string()
    return Conversation(
        model=root["model"].opt_string(),
        messages=name_tool_results(tuple(_message(message) for message in root["messages"].items())),
        tools=tuple(tools),
        stream=root["stream"].boolean(),
        max_output_tokens=limit.integer() if limit.present else None,
        reasoning_requested=effort is not None and effort != "none",
    )


def _message(node: Node) -> Message:
    node.obj()
    wire_role = node["role"].string()
    role = _ROLES.get(wire_role)
    if role is None:
        raise node["role"].fail("one of " + ", ".join(_ROLES))
    content = _parts(node["content"])
    if wire_role == "tool":
        return Message(role, (ToolResultPart(node["tool_call_id"].string(), content),))
    if wire_role == "function":
        return Message(role, (ToolResultPart("", content, name=node["name"].opt_string()),))
    if role is not Role.ASSISTANT:
        return Message(role, content)
    parts = list(content)
    refusal = node["refusal"].opt_string()
    if refusal:
        parts.append(TextPart(refusal))
    parts.extend(decode_tool_call(call) for call in node["tool_calls"].items())
    legacy = node["function_call"]
    if legacy.present:
        arguments, invalid = parse_arguments(legacy["arguments"].opt_string() or "")
        parts.append(ToolCall("", legacy["name"].string(), arguments, invalid))
    if node["audio"].present:
        parts.append(OtherPart("audio", node["audio"].obj()))
    return Message(role, tuple(parts))


def _parts(node: Node) -> tuple[ContentPart, ...]:
    """`content` as a string (empty means none) or a list of typed parts; null means none."""
    if node.is_string():
        return (TextPart(node.string()),) if node.value else ()
    return tuple(_part(part) for part in node.items())


def _part(node: Node) -> ContentPart:
    node.obj()
    kind = node["type"].string()
    if kind in ("text", "refusal"):
        return TextPart(node[kind].string())
    if kind == "image_url":
        image = node["image_url"]
        url, detail = image["url"].string(), image["detail"].opt_string()
        inline = split_data_url(url)
        if inline is None:
            return ImagePart(url=url, detail=detail)
        return ImagePart(media_type=inline[0], data=inline[1], detail=detail)
    if kind == "input_audio":
        audio = node["input_audio"]
        return AudioPart(audio["data"].string(), audio["format"].opt_string())
    if kind == "file":
        file = node["file"]
        data = file["file_data"].opt_string()
        inline = None if data is None else split_data_url(data)
        media_type, data = inline if inline is not None else (None, data)
        title = file["filename"].opt_string()
        return DocumentPart(media_type=media_type, data=data, file_id=file["file_id"].opt_string(), title=title)
    return OtherPart(kind, node.obj())


def _tool(node: Node) -> ToolDefinition:
    """`{type: "function", function: {...}}`; other types (custom…) keep their type as the kind."""
    node.obj()
    kind = node["type"].opt_string() or "function"
    spec = node[kind]
    if kind == "function":
        return _function(spec)
    name = spec["name"].opt_string() or kind
    return ToolDefinition(name, spec["description"].opt_string(), kind=kind)


def _function(node: Node) -> ToolDefinition:
    return ToolDefinition(
        node["name"].string(), node["description"].opt_string(), node["parameters"].opt_obj(), "function"
    )


latest_message = latest_in("messages", WHAT, _message)
"""The last message alone (`ChatCodec.latest_message`)."""
