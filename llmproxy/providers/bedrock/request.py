"""Decoding a Converse request body (docs/providers.md#aws-bedrock) into a Conversation.

Content blocks are unions: exactly one member set. A `cachePoint` block marks a prompt-cache breakpoint
after the block before it, so it becomes that part's `cache_control`. The model is named by the URL
(`Route.model`), and streaming by the path, so neither is in the body.
"""

from collections.abc import Callable
from dataclasses import replace
from typing import Final

from llmproxy.model import (
    AudioPart,
    CacheControl,
    ContentPart,
    Conversation,
    DocumentPart,
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
from llmproxy.providers.anthropic.wire import tool_arguments
from llmproxy.providers.base import dump_json, latest_in
from llmproxy.providers.node import Node, Parsed

WHAT: Final = "bedrock converse request"
_ROLES: Final = {"user": Role.USER, "assistant": Role.ASSISTANT}
DOCUMENT_TYPES: Final = {
    "pdf": "application/pdf",
    "csv": "text/csv",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "html": "text/html",
    "txt": "text/plain",
    "md": "text/markdown",
}
_CACHEABLE: Final = (TextPart, ImagePart, DocumentPart, ToolCall, ToolResultPart)


def decode_request(body: bytes | Parsed) -> Conversation:
    root = Node.parse(body, WHAT)
    root.obj()
    if not root["messages"].is_list():
        raise root["messages"].fail("a list of messages")
    extra = root["additionalModelRequestFields"]
    reasoning = extra["thinking"]["type"].opt_string() or extra["reasoningConfig"]["type"].opt_string()
    max_tokens = root["inferenceConfig"]["maxTokens"]
    return Conversation(
        model=None,
        messages=name_tool_results(tuple(_message(m) for m in root["messages"].items())),
        system=tuple(p for p in _blocks(root["system"], _system_block) if isinstance(p, TextPart)),
        tools=_tools(root["toolConfig"]["tools"]),
        max_output_tokens=max_tokens.integer() if max_tokens.present else None,
        reasoning_requested=reasoning in ("enabled", "adaptive"),
    )


def union(node: Node) -> tuple[str, Node]:
    """The one member a union object sets."""
    members = [key for key, value in node.obj().items() if value is not None]
    if len(members) != 1:
        raise node.fail("an object with exactly one member set")
    return members[0], node[members[0]]


def _message(node: Node) -> Message:
    role = _ROLES.get(node["role"].string())
    if role is None:
        raise node["role"].fail('"user" or "assistant"')
    return Message(role, _blocks(node["content"], _block))


def _blocks(node: Node, read: Callable[[str, Node, Node], ContentPart]) -> tuple[ContentPart, ...]:
    """A list of blocks, each `cachePoint` folded into the part before it where that part can hold one."""
    parts: list[ContentPart] = []
    for block in node.items():
        kind, value = union(block)
        if kind == "cachePoint":
            cache = CacheControl(ttl=value["ttl"].opt_string())
            value["type"].string()
            if parts and isinstance(parts[-1], _CACHEABLE) and parts[-1].cache_control is None:
                parts[-1] = replace(parts[-1], cache_control=cache)
                continue
        parts.append(read(kind, value, block))
    return tuple(parts)


def _system_block(kind: str, value: Node, block: Node) -> ContentPart:
    return TextPart(value.string()) if kind == "text" else OtherPart(kind, block.obj())


def _block(kind: str, value: Node, block: Node) -> ContentPart:
    match kind:
        case "text":
            return TextPart(value.string())
        case "image":
            return _image(value) or OtherPart(kind, block.obj())
        case "document":
            return _document(value) or OtherPart(kind, block.obj())
        case "audio" if value["source"]["bytes"].present:
            return AudioPart(value["source"]["bytes"].string(), value["format"].opt_string())
        case "toolUse":
            arguments, invalid = tool_arguments(value["input"].obj())
            return ToolCall(value["toolUseId"].string(), value["name"].string(), arguments, invalid)
        case "toolResult":
            content = tuple(_result_block(b) for b in value["content"].items())
            is_error = value["status"].opt_string() == "error"
            return ToolResultPart(value["toolUseId"].string(), content, is_error)
        case "reasoningContent":
            return _reasoning(value)
        case _:  # video, guardContent, citationsContent, searchResult…: kept whole
            return OtherPart(kind, block.obj())


def _result_block(node: Node) -> ContentPart:
    """Tool results hold text, JSON (kept as its compact text, which is what a model reads), or media."""
    kind, value = union(node)
    if kind == "json":
        return TextPart(dump_json(value.value).decode())
    return _block(kind, value, node)


def _image(node: Node) -> ImagePart | None:
    media_type = f"image/{node['format'].string()}"
    source = node["source"]
    if source["bytes"].present:
        return ImagePart(media_type, data=source["bytes"].string())
    if source["s3Location"].present:
        return ImagePart(media_type, url=source["s3Location"]["uri"].string())
    return None


def _document(node: Node) -> DocumentPart | None:
    media_type = DOCUMENT_TYPES.get(node["format"].opt_string() or "")
    title = node["name"].opt_string()
    source = node["source"]
    if source["bytes"].present:
        return DocumentPart(media_type, data=source["bytes"].string(), title=title)
    if source["text"].present:
        return DocumentPart(media_type, text=source["text"].string(), title=title)
    if source["s3Location"].present:
        return DocumentPart(media_type, url=source["s3Location"]["uri"].string(), title=title)
    return None  # block-list content has no neutral shape


def _reasoning(node: Node) -> ReasoningPart:
    kind, value = union(node)
    if kind == "redactedContent":
        return ReasoningPart(signature=value.string(), redacted=True)
    if kind != "reasoningText":
        raise node.fail("reasoningText or redactedContent")
    return ReasoningPart(text=value["text"].string(), signature=value["signature"].opt_string())


def _tools(node: Node) -> tuple[ToolDefinition, ...]:
    tools: list[ToolDefinition] = []
    for block in node.items():
        kind, value = union(block)
        if kind == "cachePoint" and tools:
            tools[-1] = replace(tools[-1], cache_control=CacheControl(ttl=value["ttl"].opt_string()))
        elif kind == "toolSpec":
            schema = value["inputSchema"]["json"]
            tools.append(ToolDefinition(value["name"].string(), value["description"].opt_string(), schema.opt_obj()))
        elif kind == "systemTool":
            tools.append(ToolDefinition(value["name"].string(), kind="systemTool"))
    return tuple(tools)


latest_message = latest_in("messages", WHAT, _message)
"""The last message alone (`ChatCodec.latest_message`)."""
