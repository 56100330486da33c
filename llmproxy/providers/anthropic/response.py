"""Non-streaming Anthropic Messages bodies (docs/providers.md#anthropic-messages), and the message identity shared with
the stream."""

from collections.abc import Callable
from typing import Any, Final

from llmproxy.errors import UnsupportedError
from llmproxy.model import Completion, ContentPart, OtherPart, ReasoningPart, TextPart, ToolCall
from llmproxy.providers import kept_fields
from llmproxy.providers.anthropic.assemble import Assembly
from llmproxy.providers.anthropic.errors import error_object, read_error
from llmproxy.providers.anthropic.wire import (
    decode_stop,
    encode_stop,
    neutral_usage,
    read_counters,
    tool_arguments,
    visible_usage,
    wire_input,
    wire_usage,
)
from llmproxy.providers.base import Answer, JsonObject, dump_json, stable_id
from llmproxy.providers.node import Node, Parsed

WHAT: Final = "anthropic response"


def message_id(completion: Completion) -> str:
    """The completion's id, or one derived from its content (same content, same id)."""
    if completion.id:
        return completion.id
    c = completion
    return stable_id("msg_", c.model, c.text, c.reasoning, c.reasoning_signature, c.tool_calls)


def message_model(completion: Completion, request: JsonObject | None) -> str:
    """The completion's model, else the one the request asked for ("" when neither says)."""
    if completion.model:
        return completion.model
    model = (request or {}).get("model")
    return model if isinstance(model, str) else ""


def decode_response(body: bytes | Parsed) -> Completion:
    root = Node.parse(body, WHAT)
    root.obj()
    kind = root["type"].opt_string()
    if kind == "error":  # a whole-request failure where a message was expected
        return Completion(stop_reason=None, error=read_error(root, None))
    if kind not in (None, "message"):
        raise root["type"].fail('"message"')
    assembly = Assembly()
    for block in root["content"].items():
        raw = block.obj()
        match block["type"].string():
            case "text":
                assembly.add_text(block["text"].string(), raw)
            case "thinking":
                assembly.add_thinking([block["thinking"].string()], block["signature"].opt_string(), raw)
            case "redacted_thinking":
                assembly.add_redacted(block["data"].string(), raw)
            case "tool_use":
                arguments, invalid = tool_arguments(block["input"].obj())
                call = ToolCall(block["id"].string(), block["name"].string(), arguments, invalid)
                assembly.add_call(call, raw)
            case _:  # server tool use and results, containers, compaction…: kept whole
                assembly.add_other(raw)
    assembly.add_fields(root.obj())
    counters: dict[str, int] = {}
    read_counters(root["usage"], counters)
    return assembly.completion(
        id=root["id"].opt_string(),
        model=root["model"].opt_string(),
        stop_reason=decode_stop(root["stop_reason"].opt_string()),
        usage=neutral_usage(counters) if root["usage"].present else None,
    )


def read_answer(body: Any, shown: Callable[[Any], Any] | None) -> Answer:
    """`decode_response`'s usage and tool calls alone; the tool calls read off the body through `shown` (whole:
    whether a field is redacted may depend on the rest of the document), when it has any. `shown` None: the
    usage alone."""
    root = Node(body, WHAT)
    root.obj()
    kind = root["type"].opt_string()
    if kind == "error":
        return Answer(None, (), error=True)
    if kind not in (None, "message"):
        raise root["type"].fail('"message"')
    calling = False
    for block in root["content"].items() if shown is not None else ():
        block.obj()
        calling = block["type"].string() == "tool_use" or calling
    calls = []
    if calling and shown is not None:
        for block in Node(shown(body), WHAT)["content"].items():
            if block["type"].value == "tool_use":
                arguments, invalid = tool_arguments(block["input"].obj())
                calls.append(ToolCall(block["id"].string(), block["name"].string(), arguments, invalid))
    counters: dict[str, int] = {}
    read_counters(root["usage"], counters)
    return Answer(neutral_usage(counters) if root["usage"].present else None, tuple(calls), error=False)


def encode_response(completion: Completion, request: JsonObject | None = None) -> bytes:
    """The message body. A completion that failed becomes the error body the request would have got
    (a body cannot carry content and an error; the status is the caller's, see `encode_error`)."""
    if completion.error is not None:
        return dump_json(error_object(completion.error.kind, completion.error.message))
    parts = kept_fields.content(completion.parts)
    content = [part_block(part) for part in parts] if completion.parts else _blocks(completion)
    body: JsonObject = {
        "id": message_id(completion),
        "type": "message",
        "role": "assistant",
        "model": message_model(completion, request),
        "content": content,
        "stop_reason": encode_stop(completion.stop_reason),
        "stop_sequence": None,
        "usage": wire_usage(visible_usage(completion.usage)),
    }
    body.update(kept_fields.at("message", completion.parts))
    return dump_json(body)


def _blocks(completion: Completion) -> list[JsonObject]:
    """The content of a completion without `parts`: reasoning, text, tool calls."""
    content: list[JsonObject] = []
    if completion.reasoning:
        signature = completion.reasoning_signature or ""
        content.append({"type": "thinking", "thinking": completion.reasoning, "signature": signature})
    elif completion.reasoning_signature:
        content.append({"type": "redacted_thinking", "data": completion.reasoning_signature})
    if completion.text:
        content.append({"type": "text", "text": completion.text})
    content.extend(part_block(call) for call in completion.tool_calls)
    return content


def part_block(part: ContentPart) -> JsonObject:
    """One part of `Completion.parts` as its content block; a kept block as it came."""
    if isinstance(part, OtherPart):
        return part.raw
    if isinstance(part, ReasoningPart):
        if part.redacted or not part.text:
            return {"type": "redacted_thinking", "data": part.signature or ""}
        return {"type": "thinking", "thinking": part.text, "signature": part.signature or ""}
    if isinstance(part, ToolCall):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": wire_input(part)}
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    raise UnsupportedError(f"an Anthropic answer cannot hold a {type(part).__name__}")
