"""Non-streaming Converse bodies (docs/providers.md#aws-bedrock). The body names no id or model: the model is in the
URL. A failed answer is Bedrock's error body alone (the status is the caller's, see `errors.encode_error`)."""

from typing import Final

from llmproxy.errors import UnsupportedError
from llmproxy.model import Completion, ContentPart, OtherPart, ReasoningPart, TextPart, ToolCall
from llmproxy.providers import kept_fields
from llmproxy.providers.anthropic.assemble import Assembly
from llmproxy.providers.anthropic.wire import tool_arguments, wire_input
from llmproxy.providers.base import JsonObject, dump_json, says_more
from llmproxy.providers.bedrock.errors import error_body, is_error_body, read_error_body
from llmproxy.providers.bedrock.request import union
from llmproxy.providers.bedrock.wire import converse_usage, decode_stop, read_usage, stop_member, wire_usage
from llmproxy.providers.node import Node, Parsed

WHAT: Final = "bedrock converse response"
METRICS: Final = {"latencyMs": 0}  # required by the shape; a Completion keeps no latency
RESPONSE_FIELDS: Final = frozenset({"output", "stopReason", "usage", "metrics"})
"""The response fields a Completion says (`metrics`: a timing, not kept); any other set one is kept
(`additionalModelResponseFields`, `trace`, `performanceConfig`, `serviceTier`…)."""


def decode_response(body: bytes | Parsed) -> Completion:
    root = Node.parse(body, WHAT)
    if is_error_body(root):
        return Completion(stop_reason=None, error=read_error_body(root, None))
    assembly = Assembly()
    message = root["output"]["message"]
    if message["role"].opt_string() not in (None, "assistant"):
        raise message["role"].fail('"assistant"')
    for block in message["content"].items():
        kind, value = union(block)
        match kind:
            case "text":
                assembly.add_text(value.string())
            case "reasoningContent" if union(value)[0] == "reasoningText" and not says_more(
                value["reasoningText"].obj(), ("text", "signature")
            ):
                reasoning = value["reasoningText"]
                assembly.add_thinking([reasoning["text"].string()], reasoning["signature"].opt_string())
            case "reasoningContent" if union(value)[0] == "redactedContent":
                assembly.add_redacted(value["redactedContent"].string())
            case "toolUse" if not says_more(value.obj(), ("toolUseId", "name", "input")):
                arguments, invalid = tool_arguments(value["input"].obj())
                call = ToolCall(value["toolUseId"].string(), value["name"].string(), arguments, invalid)
                assembly.add_call(call)
            case _:  # citations, guard content, images, other reasoning and future blocks: kept whole
                assembly.text.extend(cited_text(block.obj()))
                assembly.add_other(block.obj(), kind)
    assembly.add_fields(root.obj(), RESPONSE_FIELDS, "response")
    return assembly.completion(
        id=None, model=None, stop_reason=decode_stop(root["stopReason"]), usage=read_usage(root["usage"])
    )


def cited_text(block: JsonObject) -> list[str]:
    """The text of a `citationsContent` block (what it says still counts as the answer's text)."""
    cited = block.get("citationsContent")
    content = cited.get("content") if isinstance(cited, dict) else None
    texts = (item.get("text") for item in content if isinstance(item, dict)) if isinstance(content, list) else ()
    return [text for text in texts if isinstance(text, str)]


def encode_response(completion: Completion, request: JsonObject | None = None) -> bytes:
    del request  # a Converse body names nothing the request chose
    if completion.error is not None:
        return dump_json(error_body(completion.error.kind, completion.error.message))
    parts = kept_fields.content(completion.parts)
    content = [_block(part) for part in parts] if completion.parts else _blocks(completion)
    body: JsonObject = {
        "output": {"message": {"role": "assistant", "content": content}},
        **stop_member(completion.stop_reason),
        "usage": wire_usage(converse_usage(completion.usage)),
        "metrics": METRICS,
    }
    body.update(kept_fields.at("response", completion.parts))
    return dump_json(body)


def _blocks(completion: Completion) -> list[JsonObject]:
    """The content of a completion without `parts`: reasoning, text, tool calls."""
    content: list[JsonObject] = []
    if completion.reasoning:
        text: JsonObject = {"text": completion.reasoning}
        if completion.reasoning_signature:
            text["signature"] = completion.reasoning_signature
        content.append({"reasoningContent": {"reasoningText": text}})
    elif completion.reasoning_signature:
        content.append({"reasoningContent": {"redactedContent": completion.reasoning_signature}})
    if completion.text:
        content.append({"text": completion.text})
    content.extend(_block(call) for call in completion.tool_calls)
    return content


def _block(part: ContentPart) -> JsonObject:
    """One part of `Completion.parts` as its content block; a kept block as it came."""
    if isinstance(part, OtherPart):
        return part.raw
    if isinstance(part, ReasoningPart):
        if part.redacted or not part.text:
            return {"reasoningContent": {"redactedContent": part.signature or ""}}
        text: JsonObject = {"text": part.text}
        if part.signature:
            text["signature"] = part.signature
        return {"reasoningContent": {"reasoningText": text}}
    if isinstance(part, ToolCall):
        return {"toolUse": {"toolUseId": part.id, "name": part.name, "input": wire_input(part)}}
    if isinstance(part, TextPart):
        return {"text": part.text}
    raise UnsupportedError(f"a Converse answer cannot hold a {type(part).__name__}")
