"""Decoding an Anthropic Messages request body (as SDKs and Claude Code send it) into a Conversation."""

from typing import Final

from llmproxy.model import (
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
from llmproxy.providers.anthropic.wire import decode_cache_control, tool_arguments
from llmproxy.providers.base import latest_in
from llmproxy.providers.node import Node, Parsed
from llmproxy.providers.tool_definitions import decode_tools

WHAT: Final = "anthropic request"
_ROLES: Final = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM}
_REASONING_MODES: Final = frozenset({"enabled", "adaptive"})


def decode_request(body: bytes | Parsed) -> Conversation:
    root = Node.parse(body, WHAT)
    root.obj()
    if not root["messages"].is_list():
        raise root["messages"].fail("a list of messages")
    max_tokens = root["max_tokens"]
    return Conversation(
        model=root["model"].opt_string(),
        messages=name_tool_results(tuple(_message(m) for m in root["messages"].items())),
        system=_system(root["system"]),
        tools=decode_tools(root["tools"], _tool),
        stream=root["stream"].boolean(),
        max_output_tokens=max_tokens.integer() if max_tokens.present else None,
        reasoning_requested=root["thinking"]["type"].opt_string() in _REASONING_MODES,
    )


def _system(node: Node) -> tuple[TextPart, ...]:
    if not node.present:
        return ()
    if node.is_string():
        return (TextPart(node.string()),)
    parts: list[TextPart] = []
    for block in node.items():
        if block["type"].string() != "text":
            raise block["type"].fail('"text" (system blocks are text blocks)')
        parts.append(_text(block))
    return tuple(parts)


def _message(node: Node) -> Message:
    role_node = node["role"]
    role = _ROLES.get(role_node.string())
    if role is None:
        raise role_node.fail('"user", "assistant" or "system"')
    return Message(role, _content(node["content"]))


def _content(node: Node) -> tuple[ContentPart, ...]:
    """String content is one text part; a list holds typed blocks."""
    if node.is_string():
        return (TextPart(node.string()),)
    if not node.is_list():
        raise node.fail("a string or a list of content blocks")
    return tuple(_block(b) for b in node.items())


def _block(node: Node) -> ContentPart:
    kind = node["type"].string()
    match kind:
        case "text":
            return _text(node)
        case "image":
            return _image(node)
        case "document":
            return _document(node)
        case "tool_use":
            arguments, invalid = tool_arguments(node["input"].obj())
            return ToolCall(
                id=node["id"].string(),
                name=node["name"].string(),
                arguments=arguments,
                invalid_arguments=invalid,
                cache_control=decode_cache_control(node["cache_control"]),
            )
        case "tool_result":
            content = node["content"]
            return ToolResultPart(
                tool_call_id=node["tool_use_id"].string(),
                content=_content(content) if content.present else (),
                is_error=node["is_error"].boolean(),
                cache_control=decode_cache_control(node["cache_control"]),
            )
        case "thinking":
            return ReasoningPart(text=node["thinking"].string(), signature=node["signature"].opt_string())
        case "redacted_thinking":
            return ReasoningPart(signature=node["data"].string(), redacted=True)
        case _:  # server tool use and results, search results, containers…: kept whole
            return OtherPart(kind, node.obj())


def _text(node: Node) -> TextPart:
    return TextPart(node["text"].string(), decode_cache_control(node["cache_control"]))


def _image(node: Node) -> ContentPart:
    source = node["source"]
    cache = decode_cache_control(node["cache_control"])
    match source["type"].string():
        case "base64":
            return ImagePart(source["media_type"].opt_string(), data=source["data"].string(), cache_control=cache)
        case "url":
            return ImagePart(url=source["url"].string(), cache_control=cache)
        case "file":
            return ImagePart(file_id=source["file_id"].string(), cache_control=cache)
        case _:
            return OtherPart("image", node.obj())


def _document(node: Node) -> ContentPart:
    source = node["source"]
    title = node["title"].opt_string()
    cache = decode_cache_control(node["cache_control"])
    media_type = source["media_type"].opt_string()
    match source["type"].string():
        case "base64":
            data = source["data"].string()
            return DocumentPart(media_type, data=data, title=title, cache_control=cache)
        case "text":
            text = source["data"].string()
            return DocumentPart(media_type, text=text, title=title, cache_control=cache)
        case "url":
            return DocumentPart(media_type, url=source["url"].string(), title=title, cache_control=cache)
        case "file":
            return DocumentPart(media_type, file_id=source["file_id"].string(), title=title, cache_control=cache)
        case "content" if source["content"].is_string():
            text = source["content"].string()
            return DocumentPart(media_type, text=text, title=title, cache_control=cache)
        case _:  # block-list content and future sources have no neutral shape
            return OtherPart("document", node.obj())


def _tool(node: Node) -> ToolDefinition:
    """Custom tools (no `type`, or "custom") are functions; typed server/client tools keep their type."""
    kind = node["type"].opt_string()
    schema = node["input_schema"]
    return ToolDefinition(
        name=node["name"].string(),
        description=node["description"].opt_string(),
        parameters=schema.opt_obj(),
        kind="function" if kind in (None, "custom") else kind,
        cache_control=decode_cache_control(node["cache_control"]),
    )


latest_message = latest_in("messages", WHAT, _message)
"""The last message alone (`ChatCodec.latest_message`)."""
