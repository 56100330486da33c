"""The non-streaming `chat.completion` body (docs/providers.md#openai-chat-completions)."""

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final

from llmproxy.model import Completion, StopReason, ToolCall, Usage
from llmproxy.providers import message_parts
from llmproxy.providers.base import Answer, JsonObject, dump_json, parse_arguments
from llmproxy.providers.node import Node, Parsed
from llmproxy.providers.openai_chat import content
from llmproxy.providers.openai_chat.mapping import (
    WHAT_RESPONSE,
    decode_stream_error,
    decode_tool_call,
    decode_usage,
    encode_stream_error,
    encode_tool_call,
    encode_usage,
    finish_reason,
    header,
    stop_reason,
)

NEUTRAL: Final = frozenset(
    {"role", "refusal", "tool_calls", "function_call", "reasoning_content", "reasoning", "reasoning_details"}
)
"""The message fields a Completion says; any other set one (`annotations`, `audio`…) is kept whole."""
KNOWN_ITEMS: Final = frozenset({"text", "thinking"})
"""The content items a Completion says (Mistral's); a list holding any other is kept item by item."""


def encode_response(completion: Completion, request: JsonObject | None = None) -> bytes:
    """The body api.openai.com sends. A completion that ended in an error has no 200 body: it is sent as
    the error body (the caller takes the status from `encode_error`), so only the error survives."""
    if completion.error is not None:
        return encode_stream_error(completion.error)
    ident, created, model = header(completion, request)
    refused = completion.stop_reason is StopReason.REFUSAL
    content = None if refused or (not completion.text and completion.tool_calls) else completion.text
    message: JsonObject = {
        "role": "assistant",
        "content": content,
        "refusal": completion.text if refused else None,
        "annotations": [],
    }
    if completion.tool_calls:
        message["tool_calls"] = [encode_tool_call(call) for call in completion.tool_calls]
    message_parts.write(message, completion.parts)
    finish = None if completion.stop_reason is None else finish_reason(completion.stop_reason)
    body: JsonObject = {
        "id": ident,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
    }
    if completion.usage is not None:
        body["usage"] = encode_usage(completion.usage)
    body["service_tier"] = "default"
    body["system_fingerprint"] = None
    return dump_json(body)


def decode_response(body: bytes | Parsed) -> Completion:
    """Choice index 0 only (n>1 answers are alternatives, not parts); text is content then refusal; the
    reasoning compatible providers send beside the content is read too (`content.py`)."""
    root = Node.parse(body, WHAT_RESPONSE)
    root.obj()
    if root["error"].present and root["error"].value:
        return Completion(stop_reason=None, error=decode_stream_error(root.value, WHAT_RESPONSE))
    created = root["created"]
    completion = Completion(
        id=root["id"].opt_string(),
        model=root["model"].opt_string() or None,
        created=created.integer() if created.present else None,
        stop_reason=None,
        usage=decode_usage(root["usage"]),
    )
    for position, choice in enumerate(root["choices"].items()):
        if choice["index"].opt_integer(position) == 0:
            return _with_choice(completion, choice)
    return completion


def _with_choice(completion: Completion, choice: Node) -> Completion:
    message = choice["message"]
    message.obj()
    said = content.Said()
    content.read(message, said)
    refusal = message["refusal"].opt_string()
    calls = [decode_tool_call(call) for call in message["tool_calls"].items()]
    legacy = message["function_call"]
    if legacy.present:
        arguments, invalid = parse_arguments(legacy["arguments"].opt_string() or "")
        calls.append(ToolCall("", legacy["name"].opt_string() or "", arguments, invalid))
    return replace(
        completion,
        text="".join(said.text) + (refusal or ""),
        reasoning="".join(said.reasoning) or None,
        reasoning_signature=said.signature,
        tool_calls=tuple(calls),
        stop_reason=stop_reason(choice["finish_reason"].opt_string(), refused=refusal is not None),
        parts=message_parts.read(message.obj(), NEUTRAL, KNOWN_ITEMS),
    )


def read_answer(body: Any, shown: Callable[[Any], Any] | None) -> Answer:
    """`decode_response`'s usage and tool calls alone (choice index 0), each tool call's wire object through
    `shown` first (None: the usage alone)."""
    if type(body) is dict:
        plain = _plain_answer(body, shown)
        if plain is not None:
            return plain
    root = Node(body, WHAT_RESPONSE)
    if root.obj().get("error"):  # present and not empty, as `decode_response` reads it
        return Answer(None, (), error=True)
    usage = decode_usage(root["usage"])
    if shown is None:
        return Answer(usage, (), error=False)
    for position, choice in enumerate(root["choices"].items()):
        if choice["index"].opt_integer(position) == 0:
            message = choice["message"]
            message.obj()
            calls = [decode_tool_call(Node(shown(call.value), WHAT_RESPONSE)) for call in message["tool_calls"].items()]
            legacy = message["function_call"]
            if legacy.present:
                legacy = Node(shown(legacy.value), WHAT_RESPONSE)
                arguments, invalid = parse_arguments(legacy["arguments"].opt_string() or "")
                calls.append(ToolCall("", legacy["name"].opt_string() or "", arguments, invalid))
            return Answer(usage, tuple(calls), error=False)
    return Answer(usage, (), error=False)


def read_usage(body: Any) -> Usage | None:
    """`read_answer(body, None)`'s usage, None for an error too: a plain answer's usage object read straight off
    the parsed body (no node, no `Answer`), as a listing reads one for every exchange; any other shape read by
    `read_answer`."""
    if type(body) is dict and not body.get("error"):
        usage = body.get("usage")
        if usage is None:
            return None
        if type(usage) is dict:
            return decode_usage.plain(usage, WHAT_RESPONSE, "$.usage")
    answer = read_answer(body, None)
    return None if answer.error else answer.usage


def _plain_answer(body: dict[str, Any], shown: Callable[[Any], Any] | None) -> Answer | None:
    """The commonest answers read without walking them node by node (a gate reads thousands): no error, one
    choice, index 0, its message an object that calls no tool or calls functions in their plain shape (each
    call's wire object through `shown` first; None: the usage alone, which the walk reads without looking at the
    choices, so neither is this). None for any other, which the walk reads (and names what is wrong in it)."""
    if body.get("error"):
        return None
    usage = body.get("usage")
    if usage is not None and type(usage) is not dict:
        return None
    calls: tuple[ToolCall, ...] = ()
    choices = body.get("choices") if shown is not None else None
    if choices is not None:
        if type(choices) is not list or not choices:
            return None
        choice = choices[0]
        if type(choice) is not dict:
            return None
        index, message = choice.get("index"), choice.get("message")
        if (index is not None and (type(index) is not int or index != 0)) or type(message) is not dict:
            return None
        if message.get("function_call") is not None:
            return None
        wire = message.get("tool_calls")
        if wire is not None:
            if type(wire) is not list:
                return None
            if shown is not None:
                read = _plain_calls(wire, shown)
                if read is None:
                    return None
                calls = read
    read_usage = decode_usage(Node(usage, WHAT_RESPONSE, "$.usage")) if usage is not None else None
    return Answer(read_usage, calls, error=False)


def _plain_calls(wire: list[Any], shown: Callable[[Any], Any]) -> tuple[ToolCall, ...] | None:
    """Function calls as `decode_tool_call` reads them, each an object with a string id, the type `function`
    (or none) and a function object of a string name and string arguments; None when any is otherwise."""
    calls = []
    for call in wire:
        if type(call) is not dict:
            return None
        call = shown(call)
        function, ident = call.get("function"), call.get("id")
        kind = call.get("type")
        if (kind is not None and kind != "function") or type(function) is not dict:
            return None
        name, arguments = function.get("name"), function.get("arguments")
        if type(name) is not str or type(arguments) is not str or (ident is not None and type(ident) is not str):
            return None
        parsed, invalid = parse_arguments(arguments)
        calls.append(ToolCall(ident or "", name, parsed, invalid))
    return tuple(calls)
