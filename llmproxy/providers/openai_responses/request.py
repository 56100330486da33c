"""Responses request bodies → Conversation (docs/providers.md#openai-responses), including Codex CLI's agent turns.

Input is an item list, not a message list: one assistant turn arrives as several items (reasoning, a
message, function calls), and the tool answers as several `*_output` items. Consecutive assistant-side
items are folded into one ASSISTANT message and consecutive outputs into one TOOL message, so a turn
counts once in `Conversation.assistant_turns` whatever the client's item layout.
"""

from typing import Any

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
from llmproxy.providers.base import parse_arguments, split_data_url
from llmproxy.providers.node import Node, Parsed

WHAT = "openai responses request"

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM, "developer": Role.DEVELOPER}
_TEXT_PARTS = frozenset({"input_text", "output_text", "text", "summary_text", "reasoning_text"})
# output items the model produces besides its calls (`*_call`): the assistant's, whatever role they name
_MODEL_ITEMS = frozenset({"reasoning", "compaction", "mcp_list_tools", "mcp_approval_request", "program"})


def decode_request(body: bytes | Parsed) -> Conversation:
    root = Node.parse(body, WHAT)
    root.obj()
    instructions = root["instructions"].opt_string()
    return Conversation(
        model=root["model"].opt_string(),
        messages=name_tool_results(_messages(root["input"])),
        system=(TextPart(instructions),) if instructions else (),
        tools=(*_defined(root["tools"]), *_added_tools(root["input"])),
        stream=root["stream"].boolean(),
        max_output_tokens=root["max_output_tokens"].integer() if root["max_output_tokens"].present else None,
        reasoning_requested=root["reasoning"].present,
    )


def _messages(input_: Node) -> tuple[Message, ...]:
    if input_.is_string():
        return (Message(Role.USER, (TextPart(input_.string()),)),)
    messages: list[Message] = []
    for item in input_.items():
        role, parts = _item(item)
        if messages and messages[-1].role is role and role in (Role.ASSISTANT, Role.TOOL):
            messages[-1] = Message(role, messages[-1].parts + parts)
        else:
            messages.append(Message(role, parts))
    return tuple(messages)


def _item(item: Node) -> tuple[Role, tuple[ContentPart, ...]]:
    """One input item as (the role of the message it belongs to, its parts)."""
    type_ = item["type"].opt_string() or "message"
    if type_ == "message":
        role_name = item["role"].string()
        role = _ROLES.get(role_name)
        if role is None:
            raise item["role"].fail("user, assistant, system or developer")
        return role, _content(item["content"])
    if type_ == "function_call":
        arguments, invalid = parse_arguments(item["arguments"].opt_string() or "")
        call = ToolCall(item["call_id"].string(), item["name"].string(), arguments, invalid)
        return Role.ASSISTANT, (call,)
    if type_ == "function_call_output":
        output = item["output"]
        content = (TextPart(output.string()),) if output.is_string() else _content(output)
        return Role.TOOL, (ToolResultPart(item["call_id"].string(), content),)
    if type_ == "reasoning":
        return Role.ASSISTANT, (_reasoning(item),)
    # custom_tool_call, local_shell_call, web_search_call… and their outputs: no neutral meaning.
    return _side(type_, item["role"].value), (OtherPart(type_, item.obj()),)


def _side(type_: str, role: object) -> Role:
    """Whose an item that is not a `message` is: outputs answer the assistant's calls, and what the model
    produces — its calls (`*_call`), reasoning, compactions, MCP listings and approval requests — is the
    assistant's. Anything else is context the client adds: the role it names (Codex's `additional_tools`
    items are the developer's), else the developer's (Codex's `configuration_update`, an `item_reference`);
    never an assistant turn."""
    if type_.endswith("_output") or type_ == "mcp_approval_response":
        return Role.TOOL
    if type_.endswith("_call") or type_ in _MODEL_ITEMS:
        return Role.ASSISTANT
    named = _ROLES.get(role) if isinstance(role, str) else None
    return named or Role.DEVELOPER


def asks_nothing(body: Any) -> bool:
    """`generate: false`: Codex CLI's warm-up, which sends the prompt and wants only an empty response."""
    return isinstance(body, dict) and body.get("generate") is False


def assistant_turns(body: Any) -> int:
    """Runs of assistant-side items, each of which `decode_request` folds into one assistant message."""
    items = body.get("input") if isinstance(body, dict) else None
    if not isinstance(items, list):
        return 0
    turns, previous = 0, None
    for item in items:
        role = _role_of(item)
        turns += role is Role.ASSISTANT and previous is not Role.ASSISTANT
        previous = role
    return turns


def _role_of(item: Any) -> Role | None:
    """The role of a raw input item, None for what is not one."""
    type_ = (item.get("type") or "message") if isinstance(item, dict) else None
    if not isinstance(type_, str):
        return None
    if type_ != "message":
        return _side(type_, item.get("role"))
    role = item.get("role")
    return _ROLES.get(role) if isinstance(role, str) else None


def _reasoning(item: Node) -> ReasoningPart:
    summary = [part["text"].string() for part in item["summary"].items()]
    if not summary:  # open-weight models send the raw chain of thought as content instead
        summary = [part["text"].string() for part in item["content"].items()]
    return ReasoningPart(
        text="\n\n".join(summary),
        signature=item["encrypted_content"].opt_string(),
        id=item["id"].opt_string(),
    )


def _content(content: Node) -> tuple[ContentPart, ...]:
    if content.is_string():
        return (TextPart(content.string()),)
    if not content.is_list():
        raise content.fail("a string or a list of content parts")
    return tuple(_part(part) for part in content.items())


def _part(part: Node) -> ContentPart:
    type_ = part["type"].string()
    if type_ in _TEXT_PARTS:
        return TextPart(part["text"].string())
    if type_ == "input_image":
        media_type, data, url = _data_url(part["image_url"].opt_string())
        return ImagePart(media_type, data, url, part["file_id"].opt_string(), part["detail"].opt_string())
    if type_ == "input_file":
        media_type, data, url = _data_url(part["file_data"].opt_string())
        return DocumentPart(
            media_type=media_type,
            data=data,
            url=url or part["file_url"].opt_string(),
            file_id=part["file_id"].opt_string(),
            title=part["filename"].opt_string(),
        )
    return OtherPart(type_, part.obj())


def _data_url(value: str | None) -> tuple[str | None, str | None, str | None]:
    """``data:<type>;base64,<data>`` → (type, data, None); anything else is a URL (or bare base64 for
    `file_data`, which the API also accepts) → (None, None, url)."""
    if value is None:
        return None, None, None
    inline = split_data_url(value)
    if inline is not None:
        return inline[0], inline[1], None
    if "://" in value:
        return None, None, value
    return None, value, None


def _defined(tools: Node) -> tuple[ToolDefinition, ...]:
    return tuple(definition for tool in tools.items() for definition in _tools(tool))


def _added_tools(input_: Node) -> tuple[ToolDefinition, ...]:
    """Tools offered in the input: Codex CLI talking to OpenAI itself sends its tools as an `additional_tools`
    item rather than in `tools`."""
    if not input_.is_list():
        return ()
    return tuple(
        definition
        for item in input_.items()
        if item["type"].opt_string() == "additional_tools"
        for definition in _defined(item["tools"])
    )


def _tools(tool: Node) -> tuple[ToolDefinition, ...]:
    """A tool as definitions. A `namespace` (Codex CLI groups its sub-agent tools in one) offers its member
    tools by their own names, which is how the model calls them (the call names the namespace apart)."""
    kind = tool["type"].string()
    if kind == "namespace":
        return tuple(definition for member in tool["tools"].items() for definition in _tools(member))
    if kind == "function":
        return (
            ToolDefinition(
                name=tool["name"].string(),
                description=tool["description"].opt_string(),
                parameters=tool["parameters"].opt_obj(),
            ),
        )
    name = tool["name"].opt_string() or kind
    return (ToolDefinition(name=name, description=tool["description"].opt_string(), kind=kind),)
