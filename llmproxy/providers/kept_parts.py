"""An answer's parts as its wire spells them, for answers holding what a Completion's fields cannot say
(server tool use and results, citations, compaction, code execution…): what `cassette to-expectations`
writes into an expectation, and what the mock reads back to send such an answer again exactly.

Six formats keep parts: Anthropic's content blocks (Messages, and Anthropic models on Bedrock), the
Responses API's output items (OpenAI, Azure), Gemini's parts (Gemini, Code Assist), Bedrock Converse's
content blocks, and the one message of Chat Completions (OpenAI, Azure) and Cohere chat v2 — its content
items and its kept fields (`message_parts`). The parts are read and written by the format's own codec,
through a body holding nothing else.

Kept fields of the answer (`kept_fields`) follow the parts: where parts are typed objects (Anthropic's
message fields `container`, `context_management`…) as one-field objects, `{"container": {…}}`; where parts
are one-member objects themselves (Gemini, Converse) wrapped in the object they sit on, `{"candidate":
{"groundingMetadata": {…}}}`, `{"response": {"trace": {…}}}`.
"""

from collections.abc import Sequence
from typing import Any, Final

import orjson

from llmproxy.model import Completion, ContentPart, Operation, Provider, Route
from llmproxy.providers import kept_fields, message_parts
from llmproxy.providers.anthropic import MESSAGES
from llmproxy.providers.base import ChatCodec, dump_json
from llmproxy.providers.bedrock import CONVERSE
from llmproxy.providers.cohere_chat import CHAT as COHERE_CHAT
from llmproxy.providers.gemini import GENERATE
from llmproxy.providers.openai_chat import CHAT
from llmproxy.providers.openai_responses import RESPONSES

# format → (its codec, a body around the parts, where the parts sit in it)
_FORMATS: Final[dict[str, tuple[ChatCodec, dict[str, Any], tuple[str | int, ...]]]] = {
    "anthropic": (MESSAGES, {"type": "message", "role": "assistant", "content": []}, ("content",)),
    "openai-responses": (RESPONSES, {"object": "response", "status": "completed", "output": []}, ("output",)),
    "gemini": (
        GENERATE,
        {"candidates": [{"content": {"role": "model", "parts": []}, "index": 0}]},
        ("candidates", 0, "content", "parts"),
    ),
    "bedrock-converse": (
        CONVERSE,
        {"output": {"message": {"role": "assistant", "content": []}}, "stopReason": "end_turn"},
        ("output", "message", "content"),
    ),
    # one message: where names the message object, whose parts are content items and one-field objects
    "openai-chat": (
        CHAT,
        {"object": "chat.completion", "choices": [{"index": 0, "message": {}}]},
        ("choices", 0, "message"),
    ),
    "cohere-chat": (
        COHERE_CHAT,
        {"id": "", "message": {"role": "assistant"}, "finish_reason": "COMPLETE"},
        ("message",),
    ),
}
_MESSAGE_FORMATS: Final = frozenset({"openai-chat", "cohere-chat"})
# format → (where its kept fields sit, as `kept_fields` names it; the path there in the body; the key that
# wraps them in the parts list, None for one-field objects)
_FIELDS: Final[dict[str, tuple[str, tuple[str | int, ...], str | None]]] = {
    "anthropic": ("message", (), None),
    "gemini": ("candidate", ("candidates", 0), "candidate"),
    "bedrock-converse": ("response", (), "response"),
}

_BY_ROUTE: Final = {
    (Provider.ANTHROPIC, Operation.MESSAGES): "anthropic",
    (Provider.BEDROCK, Operation.INVOKE): "anthropic",  # Anthropic models: the only invoke bodies read
    (Provider.OPENAI, Operation.RESPONSES): "openai-responses",
    (Provider.AZURE, Operation.RESPONSES): "openai-responses",
    (Provider.GEMINI, Operation.GENERATE_CONTENT): "gemini",
    (Provider.GEMINI_CODE_ASSIST, Operation.GENERATE_CONTENT): "gemini",
    (Provider.BEDROCK, Operation.CONVERSE): "bedrock-converse",
    (Provider.OPENAI, Operation.CHAT_COMPLETIONS): "openai-chat",
    (Provider.AZURE, Operation.CHAT_COMPLETIONS): "openai-chat",
    (Provider.COHERE, Operation.CHAT): "cohere-chat",
}
FORMATS: Final = tuple(_FORMATS)


def parts_format(route: Route | None) -> str | None:
    """The format whose parts a route's answers carry, None for APIs that keep none."""
    if route is None or (route.provider, route.version) == (Provider.COHERE, "v1"):  # v1 keeps none
        return None
    return _BY_ROUTE.get((route.provider, route.operation))


def wire_parts(format_: str, completion: Completion) -> list[Any]:
    """The completion's parts as the format's wire spells them (kept ones as they came), in order."""
    if format_ in _MESSAGE_FORMATS:
        return message_parts.wire(completion.parts)
    codec, _, where = _FORMATS[format_]
    parts: list[Any] = _at(orjson.loads(codec.encode_response(completion)), where)
    if format_ in _FIELDS:
        anchor, _, wrapper = _FIELDS[format_]
        fields = kept_fields.at(anchor, completion.parts)
        parts.extend({name: value} if wrapper is None else {wrapper: {name: value}} for name, value in fields.items())
    return parts


def read_parts(format_: str, parts: Sequence[Any]) -> tuple[ContentPart, ...]:
    """Wire parts back as a Completion's parts; () when none of them needs keeping whole."""
    codec, template, where = _FORMATS[format_]
    body = orjson.loads(dump_json(template))  # a fresh copy
    if format_ in _MESSAGE_FORMATS:
        message_parts.place(_at(body, where), parts)
    else:
        content, fields = _split(format_, parts)
        _at(body, where[:-1])[where[-1]] = content
        if fields:
            _at(body, _FIELDS[format_][1]).update(fields)
    return codec.decode_response(dump_json(body)).parts


def _split(format_: str, parts: Sequence[Any]) -> tuple[list[Any], dict[str, Any]]:
    """A parts list's content parts, and the kept fields it ends with."""
    if format_ not in _FIELDS:
        return list(parts), {}
    wrapper = _FIELDS[format_][2]
    content: list[Any] = []
    fields: dict[str, Any] = {}
    for part in parts:
        if wrapper is None and isinstance(part, dict) and "type" not in part:
            fields.update(part)
        elif wrapper is not None and isinstance(part, dict) and list(part) == [wrapper]:
            fields.update(part[wrapper] if isinstance(part[wrapper], dict) else {})
        else:
            content.append(part)
    return content, fields


def _at(body: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        body = body[step]
    return body
