"""Token usage of a mocked answer: declared in the file, or estimated.

Declared usage is encoded as given, each number in the provider's own field: `inputTokens` is what the
provider reports as input — the uncached part for Anthropic and Bedrock (`input_tokens`, `inputTokens`,
beside `cache_read_input_tokens`), the whole prompt elsewhere (OpenAI `prompt_tokens`, Gemini
`promptTokenCount`, which include `cached_tokens`/`cachedContentTokenCount`). `outputTokens` includes
`reasoningTokens`, as OpenAI counts them (Gemini gets them apart: `candidatesTokenCount` is the rest).
Absent usage is estimated from the request and the answer: about four bytes a token, plus a few tokens of
framing per message — an estimate, marked as one.
"""

import functools
import math
from typing import TYPE_CHECKING

import orjson

from llmproxy.model import Completion, Conversation, Provider, TextPart, ToolCall, ToolResultPart, Usage
from llmproxy.providers.registry import facts

if TYPE_CHECKING:  # the file model (and jsonschema under it) loads only where a mock file is read: a report
    from llmproxy.mock import spec  # estimates tokens here without either

_PER_MESSAGE = 4  # role and separators, as chat formats frame each message


@functools.lru_cache(maxsize=1024)
def declared_usage(usage: "spec.Usage", provider: Provider | None) -> Usage:
    cached = usage.cachedInputTokens + usage.cacheCreationTokens if facts(provider).input_excludes_cache else 0
    return Usage(
        input_tokens=usage.inputTokens + cached,
        output_tokens=usage.outputTokens,
        cache_read_tokens=usage.cachedInputTokens,
        cache_write_tokens=usage.cacheCreationTokens,
        reasoning_tokens=usage.reasoningTokens,
    )


def usage_spec(usage: Usage, provider: Provider | None) -> "spec.Usage":
    """The file's form of a usage read off the wire: `declared_usage` undone."""
    from llmproxy.mock import spec

    uncached = facts(provider).input_excludes_cache
    return spec.Usage(
        inputTokens=usage.uncached_input_tokens if uncached else usage.input_tokens,
        outputTokens=usage.output_tokens,
        cachedInputTokens=usage.cache_read_tokens,
        cacheCreationTokens=usage.cache_write_tokens,
        reasoningTokens=usage.reasoning_tokens,
    )


def estimate_usage(conversation: Conversation | None, completion: Completion) -> Usage:
    prompt = 0
    if conversation is not None:
        prompt = sum(tokens(part.text) for part in conversation.system)
        prompt += sum(_message_tokens(message.parts) + _PER_MESSAGE for message in conversation.messages)
        prompt += sum(tokens(tool.name) + tokens(_json(tool.parameters)) for tool in conversation.tools)
    reasoning = tokens(completion.reasoning or "")
    output = tokens(completion.text) + reasoning + sum(_call_tokens(call) for call in completion.tool_calls)
    return Usage(input_tokens=max(prompt, 1), output_tokens=output, reasoning_tokens=reasoning, estimated=True)


def tokens(text: str) -> int:
    """About four bytes of English a token: the usual rule of thumb for BPE vocabularies."""
    return math.ceil(len(text.encode()) / 4)


def _message_tokens(parts: tuple[object, ...]) -> int:
    total = 0
    for part in parts:
        if isinstance(part, TextPart):
            total += tokens(part.text)
        elif isinstance(part, ToolCall):
            total += _call_tokens(part)
        elif isinstance(part, ToolResultPart):
            total += tokens(part.text)
    return total


def _call_tokens(call: ToolCall) -> int:
    return tokens(call.name) + tokens(_json(call.arguments))


def _json(value: object) -> str:
    return orjson.dumps(value).decode() if value is not None else ""
