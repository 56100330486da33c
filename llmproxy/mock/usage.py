"""Token usage of a mocked answer: declared in the file, or estimated.

Declared usage is encoded as given, each number in the provider's own field: `inputTokens` is what the
provider reports as input — the uncached part for Anthropic and Bedrock (`input_tokens`, `inputTokens`,
beside `cache_read_input_tokens`), the whole prompt elsewhere (OpenAI `prompt_tokens`, Gemini
`promptTokenCount`, which include `cached_tokens`/`cachedContentTokenCount`). `outputTokens` includes
`reasoningTokens`, as OpenAI counts them (Gemini gets them apart: `candidatesTokenCount` is the rest).
Absent usage is estimated from the request and the answer: about four bytes a token, plus a few tokens of
framing per message — an estimate, marked as one. `prompt_pieces` gives the same estimate piece by piece, in
the order a provider reads the prompt, for what a prompt cache would hold of it (`mock.prompt_cache`).
"""

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import orjson

from llmproxy.model import (
    CacheControl,
    Completion,
    ContentPart,
    Conversation,
    Provider,
    TextPart,
    ToolCall,
    ToolResultPart,
    Usage,
)
from llmproxy.providers.registry import facts

if TYPE_CHECKING:
    # the file model (and jsonschema under it) loads only where a mock file is read: a report estimates tokens
    # here without either
    from llmproxy.mock import spec


class _Dataclass(Protocol):
    """Any dataclass instance (what `dataclasses.replace` takes), named here rather than from typeshed's private
    module, which no installed package provides."""

    __dataclass_fields__: ClassVar[dict[str, Any]]


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
    prompt = sum(piece.tokens for piece in prompt_pieces(conversation)) if conversation is not None else 0
    reasoning = tokens(completion.reasoning or "")
    output = tokens(completion.text) + reasoning + sum(_call_tokens(call) for call in completion.tool_calls)
    return Usage(input_tokens=max(prompt, 1), output_tokens=output, reasoning_tokens=reasoning, estimated=True)


@dataclass(frozen=True, slots=True)
class PromptPiece:
    """One piece of a prompt and its estimated tokens: a tool definition, a system block, a part of a message,
    or the framing that closes a message (`content` is then the message's role). `content` is kept without
    its cache breakpoint, so the same piece compares equal wherever the client put its breakpoints;
    `breakpoint` is the one the client set on it."""

    content: object
    tokens: int
    breakpoint: CacheControl | None = None


def prompt_pieces(conversation: Conversation) -> Iterator[PromptPiece]:
    """The prompt piece by piece in the order the providers read it for caching — tools, system, messages
    (Anthropic documents that order; the others cache whole prefixes of a prompt that starts the same
    way) — adding up to `estimate_usage`'s input."""
    for tool in conversation.tools:
        size = tokens(tool.name) + tokens(tool.description or "") + tokens(_json(tool.parameters))
        yield PromptPiece(_apart(tool, tool.cache_control), size, tool.cache_control)
    for part in conversation.system:
        yield PromptPiece(_apart(part, part.cache_control), tokens(part.text), part.cache_control)
    for message in conversation.messages:
        for content in message.parts:
            yield _part_piece(content)
        yield PromptPiece(message.role, _PER_MESSAGE)


def tokens(text: str) -> int:
    """About four bytes of English a token: the usual rule of thumb for BPE vocabularies."""
    return math.ceil(len(text.encode()) / 4)


def _part_piece(part: ContentPart) -> PromptPiece:
    marked: CacheControl | None = getattr(part, "cache_control", None)
    content = _apart(part, marked)
    if isinstance(part, TextPart | ToolResultPart):
        return PromptPiece(content, tokens(part.text), marked)
    if isinstance(part, ToolCall):
        return PromptPiece(content, _call_tokens(part), marked)
    return PromptPiece(content, 0, marked)  # images, audio, documents, reasoning: not estimated


def _apart[T: _Dataclass](value: T, marked: CacheControl | None) -> T:
    """`value` without its cache breakpoint `marked` (the same object when it has none)."""
    return replace(value, cache_control=None) if marked is not None else value


def _call_tokens(call: ToolCall) -> int:
    return tokens(call.name) + tokens(_json(call.arguments))


def _json(value: object) -> str:
    return orjson.dumps(value).decode() if value is not None else ""
