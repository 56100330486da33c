"""Non-streaming Converse bodies (wire-formats.md §6.2). The body names no id or model: the model is in the
URL. A failed answer is Bedrock's error body alone (the status is the caller's, see `errors.encode_error`)."""

from typing import Final

from llmproxy.model import Completion, ToolCall
from llmproxy.providers.anthropic.assemble import Assembly
from llmproxy.providers.anthropic.wire import tool_arguments, wire_input
from llmproxy.providers.base import JsonObject, dump_json
from llmproxy.providers.bedrock.errors import error_body, is_error_body, read_error_body
from llmproxy.providers.bedrock.request import union
from llmproxy.providers.bedrock.wire import converse_usage, decode_stop, read_usage, stop_member, wire_usage
from llmproxy.providers.node import Node

WHAT: Final = "bedrock converse response"
METRICS: Final = {"latencyMs": 0}  # required by the shape; a Completion keeps no latency


def decode_response(body: bytes) -> Completion:
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
                assembly.text.append(value.string())
            case "reasoningContent":
                reasoning_kind, reasoning = union(value)
                if reasoning_kind == "reasoningText":
                    assembly.add_thinking([reasoning["text"].string()], reasoning["signature"].opt_string())
                elif reasoning_kind == "redactedContent":
                    assembly.add_redacted(reasoning.string())
            case "toolUse":
                arguments, invalid = tool_arguments(value["input"].obj())
                assembly.tool_calls.append(
                    ToolCall(value["toolUseId"].string(), value["name"].string(), arguments, invalid)
                )
            case _:  # citations, images and future blocks have no place in a Completion
                pass
    return assembly.completion(
        id=None, model=None, stop_reason=decode_stop(root["stopReason"]), usage=read_usage(root["usage"])
    )


def encode_response(completion: Completion, request: JsonObject | None = None) -> bytes:
    del request  # a Converse body names nothing the request chose
    if completion.error is not None:
        return dump_json(error_body(completion.error.kind, completion.error.message))
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
    content.extend(
        {"toolUse": {"toolUseId": call.id, "name": call.name, "input": wire_input(call)}}
        for call in completion.tool_calls
    )
    body = {
        "output": {"message": {"role": "assistant", "content": content}},
        **stop_member(completion.stop_reason),
        "usage": wire_usage(converse_usage(completion.usage)),
        "metrics": METRICS,
    }
    return dump_json(body)
