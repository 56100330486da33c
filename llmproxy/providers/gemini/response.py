"""`GenerateContentResponse` bodies (docs/providers.md#gemini), and the parts and response objects that the
stream and Code Assist encoders send too."""

from collections.abc import Callable
from itertools import chain
from typing import Any, Final

from llmproxy.errors import UnsupportedError
from llmproxy.model import Completion, ContentPart, OtherPart, ReasoningPart, TextPart, ToolCall
from llmproxy.providers import kept_fields
from llmproxy.providers.base import Answer, JsonObject, dump_json, says_more, split_deltas
from llmproxy.providers.gemini.assemble import KNOWN_FIELDS, Assembly
from llmproxy.providers.gemini.errors import error_object, read_error
from llmproxy.providers.gemini.wire import (
    decode_call,
    decode_usage,
    encode_call,
    encode_usage,
    finish_reason,
    get,
    model_version,
    response_id,
)
from llmproxy.providers.node import Node, Parsed

WHAT: Final = "gemini response"


def part_groups(completion: Completion, delta_chars: int | None = None) -> list[list[JsonObject]]:
    """The completion's parts in wire order (thoughts, text, function calls), grouped as they are sent: one
    group per reasoning or text delta of `delta_chars` (the whole text when None), one for all calls.

    The thought signature rides where Gemini puts it: on the first function call, else on the last part,
    else on an empty text part of its own."""

    def pieces(text: str) -> tuple[str, ...]:
        return split_deltas(text, delta_chars) if delta_chars is not None else (text,) if text else ()

    if completion.parts:
        return [group for part in kept_fields.content(completion.parts) for group in _kept_groups(part, pieces)]
    groups: list[list[JsonObject]] = [[{"text": p, "thought": True}] for p in pieces(completion.reasoning or "")]
    groups.extend([{"text": p}] for p in pieces(completion.text))
    calls: list[JsonObject] = [{"functionCall": encode_call(call)} for call in completion.tool_calls]
    if calls:
        groups.append(calls)
    signature = completion.reasoning_signature
    if signature:
        if calls:
            calls[0]["thoughtSignature"] = signature
        elif groups:
            groups[-1][-1]["thoughtSignature"] = signature
        else:
            groups.append([{"text": "", "thoughtSignature": signature}])
    return groups


def _kept_groups(part: ContentPart, pieces: Callable[[str], tuple[str, ...]]) -> list[list[JsonObject]]:
    """One part of an answer kept part by part (`Completion.parts`): texts and thoughts in their deltas (a
    thought's signature on its last), a call or a part kept whole in a group of its own."""
    if isinstance(part, OtherPart):
        return [[part.raw]]
    if isinstance(part, ToolCall):
        return [[{"functionCall": encode_call(part)}]]
    if isinstance(part, TextPart):
        return [[{"text": piece}] for piece in pieces(part.text)]
    if not isinstance(part, ReasoningPart):
        raise UnsupportedError(f"a Gemini answer cannot hold a {type(part).__name__}")
    groups: list[list[JsonObject]] = [[{"text": piece, "thought": True}] for piece in pieces(part.text)]
    if part.signature:
        groups = groups or [[{"text": "", "thought": True}]]
        groups[-1][-1]["thoughtSignature"] = part.signature
    return groups


def response_object(
    completion: Completion, request: JsonObject | None, parts: list[JsonObject], *, final: bool
) -> JsonObject:
    """One response object with these parts; the `final` one carries the finish reason, the candidate's kept
    fields (grounding, citations…) and usage."""
    candidate: JsonObject = {"content": {"role": "model", "parts": parts} if parts else {"role": "model"}}
    finish = finish_reason(completion.stop_reason) if final else None
    if finish is not None:
        candidate["finishReason"] = finish
    if final:
        candidate.update(kept_fields.at("candidate", completion.parts))
    candidate["index"] = 0
    body: JsonObject = {"candidates": [candidate]}
    if final and completion.usage is not None:
        body["usageMetadata"] = encode_usage(completion.usage)
    body["modelVersion"] = model_version(completion, request)
    body["responseId"] = response_id(completion)
    return body


def body_object(completion: Completion, request: JsonObject | None = None) -> JsonObject:
    """The body the API sends. A completion that failed becomes the error body the request would have
    got (a body cannot carry content and an error; the status is the caller's, see `encode_error`)."""
    if completion.error is not None:
        return error_object(completion.error.kind, completion.error.message)
    parts = list(chain.from_iterable(part_groups(completion)))
    return response_object(completion, request, parts, final=True)


def encode_response(completion: Completion, request: JsonObject | None = None) -> bytes:
    return dump_json(body_object(completion, request))


def decode_response(body: bytes | Parsed) -> Completion:
    return read_response(Node.parse(body, WHAT))


def read_response(root: Node, *, id: str | None = None) -> Completion:
    """A response object, or an error body where one was expected."""
    root.obj()
    if root["error"].present:
        return Completion(stop_reason=None, error=read_error(root, None))
    assembly = Assembly()
    assembly.add(root, id=id)
    return assembly.completion()


def read_answer(body: Any, shown: Callable[[Any], Any] | None) -> Answer:
    """`decode_response`'s usage and tool calls alone (`read_answer_at`); `shown` None: the usage alone."""
    if shown is None:
        return read_answer_at(Node(body, WHAT), None)
    return read_answer_at(Node(body, WHAT), lambda: Node(shown(body), WHAT))


def read_answer_at(root: Node, shown: Callable[[], Node] | None) -> Answer:
    """`read_response`'s usage and tool calls alone (the first candidate's); the calls read off the response
    `shown` gives, redacted whole (whether a field is redacted may depend on the rest of the document), when it
    has any. A part that says more than a call (a signature, a field of a later version) is no call, as the
    decode keeps it whole."""
    root.obj()
    if root["error"].present:
        return Answer(None, (), error=True)
    usage = decode_usage(get(root, "usageMetadata"))
    if shown is None or not _calls(root, lambda call: None):
        return Answer(usage, (), error=False)
    calls: list[ToolCall] = []
    _calls(shown(), lambda call: calls.append(decode_call(call)))
    return Answer(usage, tuple(calls), error=False)


def _calls(root: Node, read: Callable[[Node], None]) -> bool:
    """Whether the first candidate's parts hold a function call, each one given to `read`."""
    found = False
    for position, candidate in enumerate(root["candidates"].items()):
        if candidate["index"].opt_integer(position) == 0:
            for part in candidate["content"]["parts"].items():
                if says_more(part.obj(), KNOWN_FIELDS) or get(part, "thought").boolean():
                    continue
                call = get(part, "functionCall")
                if part["text"].opt_string() is None and call.present:
                    read(call)
                    found = True
            break
    return found
