"""Decoding Ollama request bodies into Conversations: /api/chat (a message list) and /api/generate (one
prompt). Both stream unless `"stream": false`, cap the answer with `options.num_predict` and ask for
thinking with `think` (true, or "low" / "medium" / "high")."""

from typing import Any, Final

from llmproxy.model import (
    ContentPart,
    Conversation,
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
from llmproxy.providers.base import latest_in
from llmproxy.providers.node import Node, Parsed
from llmproxy.providers.ollama import wire
from llmproxy.providers.tool_definitions import decode_tools

WHAT_CHAT: Final = "ollama chat request"
WHAT_GENERATE: Final = "ollama generate request"
_ROLES: Final = {"system": Role.SYSTEM, "user": Role.USER, "assistant": Role.ASSISTANT, "tool": Role.TOOL}


def decode_chat_request(body: bytes | Parsed) -> Conversation:
    root = Node.parse(body, WHAT_CHAT)
    root.obj()
    stream, limit, think = _settings(root)
    return Conversation(
        model=root["model"].opt_string(),
        messages=name_tool_results(tuple(_message(m) for m in root["messages"].items())),
        tools=decode_tools(root["tools"], _tool),
        stream=stream,
        max_output_tokens=limit,
        reasoning_requested=think,
    )


def decode_generate_request(body: bytes | Parsed) -> Conversation:
    """The prompt and its images are one user message; `suffix` (fill-in-the-middle) and `context` (the token
    ids of an earlier answer) have no neutral meaning and are kept whole in it."""
    root = Node.parse(body, WHAT_GENERATE)
    root.obj()
    prompt = root["prompt"].opt_string()
    parts: list[ContentPart] = [TextPart(prompt)] if prompt else []
    parts += _images(root["images"])
    suffix = root["suffix"].opt_string()
    if suffix:
        parts.append(OtherPart("suffix", {"suffix": suffix}))
    context = [token.integer() for token in root["context"].items()]
    if context:
        parts.append(OtherPart("context", {"context": context}))
    system = root["system"].opt_string()
    stream, limit, think = _settings(root)
    return Conversation(
        model=root["model"].opt_string(),
        messages=(Message(Role.USER, tuple(parts)),) if parts else (),
        system=(TextPart(system),) if system else (),
        stream=stream,
        max_output_tokens=limit,
        reasoning_requested=think,
    )


def _settings(root: Node) -> tuple[bool, int | None, bool]:
    """`stream` (on by default), `options.num_predict` (positive: a cap; -1 and -2: none) and `think`."""
    num_predict = root["options"]["num_predict"]
    limit = num_predict.integer() if num_predict.present else None
    think = root["think"]
    if think.present and not isinstance(think.value, bool | str):
        raise think.fail('true, false, "low", "medium" or "high"')
    limit = limit if limit is not None and limit > 0 else None
    return root["stream"].boolean(default=True), limit, think.present and think.value is not False


def _message(node: Node) -> Message:
    role_node = node["role"]
    role = _ROLES.get(role_node.string())
    if role is None:
        raise role_node.fail('"system", "user", "assistant" or "tool"')
    text = node["content"].opt_string()
    content: list[ContentPart] = [TextPart(text)] if text else []
    content += _images(node["images"])
    if role is Role.TOOL:  # a tool's answer names the tool, and on newer servers the call
        call_id = node["tool_call_id"].opt_string() or ""
        result = ToolResultPart(call_id, tuple(content), name=node["tool_name"].opt_string())
        return Message(role, (result,))
    thinking = node["thinking"].opt_string()
    parts: list[ContentPart] = [ReasoningPart(thinking)] if thinking else []
    parts += content
    parts += [wire.decode_tool_call(call) for call in node["tool_calls"].items()]
    return Message(role, tuple(parts))


def _images(node: Node) -> list[ContentPart]:
    """Ollama's images are bare base64 strings (no media type)."""
    return [ImagePart(data=image.string()) for image in node.items()]


def _tool(node: Node) -> ToolDefinition:
    function = node["function"]
    return ToolDefinition(
        name=function["name"].string(),
        description=function["description"].opt_string(),
        parameters=function["parameters"].opt_obj(),
        kind=node["type"].opt_string() or "function",
    )


def generate_turns(body: Any) -> int:
    """A generate request is one prompt: no assistant turn (an earlier answer's `context` is opaque)."""
    return 0


latest_message = latest_in("messages", WHAT_CHAT, _message)
"""The last message alone (`ChatCodec.latest_message`)."""
