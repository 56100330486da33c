"""A `generateContent` request body (docs/providers.md#gemini) as a Conversation.

The model is named by the URL, not the body (`models/{m}:generateContent`); the Code Assist wrapper names
it in its own body and passes it in. Whether the answer streams is the URL's business too
(`:streamGenerateContent`), so `Conversation.stream` stays False here and the route says.
"""

from typing import Any, Final

import orjson

from llmproxy.model import (
    AudioPart,
    ContentPart,
    Conversation,
    DocumentPart,
    ImagePart,
    Message,
    OtherPart,
    ReasoningPart,
    Role,
    TextPart,
    ToolDefinition,
    ToolResultPart,
    name_tool_results,
)
from llmproxy.providers.base import latest_in, role_count
from llmproxy.providers.gemini.wire import decode_call, get, snake
from llmproxy.providers.node import Node, Parsed

WHAT: Final = "gemini request"
_ROLES: Final = {"user": Role.USER, "model": Role.ASSISTANT, "function": Role.TOOL, "system": Role.SYSTEM}
# Keys that annotate a part rather than hold its data, in both spellings.
_ANNOTATIONS: Final = frozenset(
    name
    for camel in ("thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution")
    for name in (camel, snake(camel))
)


def decode_request(body: bytes | Parsed) -> Conversation:
    return read_request(Node.parse(body, WHAT), None)


def read_request(root: Node, model: str | None) -> Conversation:
    """The request object at `root` (the body itself, or Code Assist's `request`)."""
    root.obj()
    contents = root["contents"]
    if not contents.is_list() and not isinstance(contents.value, dict):
        raise contents.fail("a list of contents")
    config = get(root, "generationConfig")
    limit = get(config, "maxOutputTokens")
    return Conversation(
        model=model,
        messages=name_tool_results(tuple(_message(content) for content in contents.each())),
        system=_system(get(root, "systemInstruction")),
        tools=tuple(tool for node in root["tools"].each() for tool in _tools(node)),
        max_output_tokens=limit.integer() if limit.present else None,
        reasoning_requested=_reasoning_requested(get(config, "thinkingConfig")),
    )


def _reasoning_requested(thinking: Node) -> bool:
    """Thought summaries asked for, a thinking budget other than none, or a thinking level."""
    budget = get(thinking, "thinkingBudget")
    return (
        get(thinking, "includeThoughts").boolean()
        or (budget.present and budget.integer() != 0)
        or get(thinking, "thinkingLevel").present
    )


def _system(node: Node) -> tuple[TextPart, ...]:
    """`systemInstruction` is a Content whose parts are text."""
    if not node.present:
        return ()
    node.obj()
    return tuple(TextPart(part["text"].string()) for part in node["parts"].each())


def _message(node: Node) -> Message:
    node.obj()
    role_node = node["role"]
    role = _ROLES.get(role_node.opt_string() or "user")  # a single-turn request may leave the role out
    if role is None:
        raise role_node.fail('"user" or "model"')
    return Message(role, read_parts(node["parts"]))


def read_parts(node: Node) -> tuple[ContentPart, ...]:
    """A Content's parts. A thought signature on an ordinary part becomes a signature-only ReasoningPart
    just before it: the signature belongs to the thinking that led to that part."""
    parts: list[ContentPart] = []
    for part in node.each():
        part.obj()
        signature = get(part, "thoughtSignature").opt_string()
        if get(part, "thought").boolean():
            parts.append(ReasoningPart(part["text"].opt_string() or "", signature))
            continue
        if signature:
            parts.append(ReasoningPart(signature=signature))
        parts.append(_part(part))
    return tuple(parts)


def _part(node: Node) -> ContentPart:
    if node["text"].present:
        return TextPart(node["text"].string())
    inline = get(node, "inlineData")
    if inline.present:
        return _inline(get(inline, "mimeType").opt_string(), inline["data"].string())
    file = get(node, "fileData")
    if file.present:
        media_type, uri = get(file, "mimeType").opt_string(), get(file, "fileUri").string()
        is_image = (media_type or "").startswith("image/")
        return ImagePart(media_type, url=uri) if is_image else DocumentPart(media_type, url=uri)
    call = get(node, "functionCall")
    if call.present:
        return decode_call(call)
    response = get(node, "functionResponse")
    if response.present:
        return _function_response(response)
    kind = next((key for key in node.obj() if key not in _ANNOTATIONS), "part")
    return OtherPart(kind, node.obj())  # executableCode, codeExecutionResult…: kept whole


def _inline(media_type: str | None, data: str) -> ContentPart:
    kind, _, subtype = (media_type or "").partition("/")
    if kind == "image":
        return ImagePart(media_type, data=data)
    if kind == "audio":
        return AudioPart(data, subtype or None)
    return DocumentPart(media_type, data=data)


def _function_response(node: Node) -> ToolResultPart:
    """`response` is any JSON object: `{"output": text}` (the Gemini CLI's shape) reads as that text, an
    object with `error` and no `output` is a failed call, anything else reads as its JSON. Multimodal
    results (`parts`) follow the text."""
    response = node["response"]
    value = response.opt_obj() or {}
    output = value.get("output")
    text = output if isinstance(output, str) and len(value) == 1 else orjson.dumps(value).decode()
    content: list[ContentPart] = [TextPart(text)] if value else []
    content.extend(read_parts(node["parts"]))
    return ToolResultPart(
        tool_call_id=node["id"].opt_string() or "",
        content=tuple(content),
        is_error="error" in value and "output" not in value,
        name=node["name"].opt_string(),
    )


def _tools(node: Node) -> list[ToolDefinition]:
    """A Tool holds function declarations and/or built-in tools (googleSearch, codeExecution…), which
    keep their key as their kind."""
    tools: list[ToolDefinition] = []
    for key in node.obj():
        if key in ("functionDeclarations", "function_declarations"):
            tools.extend(_function(function) for function in node[key].each())
        else:
            tools.append(ToolDefinition(key, kind=key))
    return tools


def _function(node: Node) -> ToolDefinition:
    schema = node.first("parametersJsonSchema", "parameters_json_schema", "parameters")
    return ToolDefinition(node["name"].string(), node["description"].opt_string(), schema.opt_obj())


def assistant_turns(body: Any) -> int:
    return role_count(body, "contents", "model")


latest_message = latest_in("contents", WHAT, _message, lone=True)
"""The last message alone (`ChatCodec.latest_message`)."""
