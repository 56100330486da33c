"""An answer's parts as its wire spells them, for answers holding what a Completion's fields cannot say
(server tool use and results, citations, compaction, code execution…): what `cassette to-expectations`
writes into an expectation, and what the mock reads back to send such an answer again exactly.

Three formats keep parts: Anthropic's content blocks (Messages, and Anthropic models on Bedrock), the
Responses API's output items (OpenAI, Azure) and Gemini's parts (Gemini, Code Assist). The parts are read
and written by the format's own codec, through a body holding nothing else.
"""

from collections.abc import Sequence
from typing import Any, Final

import orjson

from llmproxy.model import Completion, ContentPart, Operation, Provider, Route
from llmproxy.providers.anthropic import MESSAGES
from llmproxy.providers.base import ChatCodec, dump_json
from llmproxy.providers.gemini import GENERATE
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
}

_BY_ROUTE: Final = {
    (Provider.ANTHROPIC, Operation.MESSAGES): "anthropic",
    (Provider.BEDROCK, Operation.INVOKE): "anthropic",  # Anthropic models: the only invoke bodies read
    (Provider.OPENAI, Operation.RESPONSES): "openai-responses",
    (Provider.AZURE, Operation.RESPONSES): "openai-responses",
    (Provider.GEMINI, Operation.GENERATE_CONTENT): "gemini",
    (Provider.GEMINI_CODE_ASSIST, Operation.GENERATE_CONTENT): "gemini",
}
FORMATS: Final = tuple(_FORMATS)


def parts_format(route: Route | None) -> str | None:
    """The format whose parts a route's answers carry, None for APIs that keep none."""
    return None if route is None else _BY_ROUTE.get((route.provider, route.operation))


def wire_parts(format_: str, completion: Completion) -> list[Any]:
    """The completion's parts as the format's wire spells them (kept ones as they came), in order."""
    codec, _, where = _FORMATS[format_]
    parts: list[Any] = _at(orjson.loads(codec.encode_response(completion)), where)
    return parts


def read_parts(format_: str, parts: Sequence[Any]) -> tuple[ContentPart, ...]:
    """Wire parts back as a Completion's parts; () when none of them needs keeping whole."""
    codec, template, where = _FORMATS[format_]
    body = orjson.loads(dump_json(template))  # a fresh copy
    _at(body, where[:-1])[where[-1]] = list(parts)
    return codec.decode_response(dump_json(body)).parts


def _at(body: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        body = body[step]
    return body
