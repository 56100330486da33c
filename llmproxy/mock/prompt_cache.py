"""The usage a provider reports for a request, its prompt cache included: what a stand-in for the provider
answers with (the tests' scripted upstream, which records the example cassettes), so a recorded session
shows the cache reads and writes a real one would — large reads on an agent's later turns.

Each provider caches its own way, as its documentation says:

* Anthropic (and Claude on Bedrock): only where the client set a breakpoint (`cache_control`, Bedrock's
  `cachePoint`). A request writes the prefix up to each breakpoint that reaches the model's minimum — 1,024
  tokens (Sonnet, Opus up to 4.1), 2,048 (Haiku 3 and 3.5), 4,096 (Haiku 4.5, Opus 4.5 and later) — and
  reads the longest prefix an earlier request wrote, found at a breakpoint or up to 20 blocks before one.
  The wire's `input_tokens` is what is left: `cache_creation_input_tokens`, `cache_read_input_tokens` apart.
* OpenAI (Chat Completions, Responses; Azure alike): automatic for prompts of 1,024 tokens or more. The part
  an earlier prompt began with is read in steps of 128 tokens from 1,024 (`cached_tokens`, which the input
  count includes).
* Gemini (and Code Assist): implicit caching on 2.5 and later, from 1,024 tokens (4,096 for Pro models and
  3.5 on): the prefix an earlier prompt shared (`cachedContentTokenCount`, within `promptTokenCount`).

Sizes are llmproxy's estimate, piece by piece (`usage.prompt_pieces`), so a prefix ends where a piece does.
One cache per provider and model; nothing expires (a stand-in's run lasts seconds, a cache minutes). The
block Claude Code puts first in its system prompt, `x-anthropic-billing-header: …`, differs on every request:
Anthropic's API reads it as billing metadata, so it does not break the cached prefix there.
"""

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import accumulate

from llmproxy.mock.usage import PromptPiece, estimate_usage, prompt_pieces
from llmproxy.model import Completion, Conversation, Provider, Role, TextPart, Usage

type Minimum = Callable[[str], int | None]
"""The shortest prefix a model caches, in tokens, by model name; None: the model does not cache."""

ANTHROPIC_LOOKBACK = 20  # blocks before a breakpoint where Anthropic still finds an earlier write
OPENAI_STEP = 128  # OpenAI reads cached prefixes in steps of this many tokens
BILLING_HEADER = "x-anthropic-billing-header:"


@dataclass(frozen=True, slots=True)
class _Rules:
    minimum: Minimum
    breakpoints: bool = False  # caches only where the client set a breakpoint (else every prefix, by itself)
    step: int = 1  # reads come in whole steps above the minimum
    metadata: Callable[[object], bool] = lambda content: False  # pieces the API reads aside, not as prompt


class PromptCache:
    """What one account's prompt caches hold, as the requests answered so far left them."""

    def __init__(self) -> None:
        self._held: set[bytes] = set()  # the cached prefixes, each a digest of provider, model and prompt

    def usage(self, provider: Provider | None, conversation: Conversation, completion: Completion) -> Usage:
        """The usage `provider` reports for answering `conversation` with `completion` (sizes estimated, so
        marked as an estimate), the cache updated as the provider's would be."""
        estimate = estimate_usage(conversation, completion)
        rules = _RULES.get(provider) if provider is not None else None
        minimum = rules.minimum(conversation.model or "") if rules is not None else None
        if rules is None or minimum is None:
            return estimate
        pieces = list(prompt_pieces(conversation))
        ends = list(accumulate(piece.tokens for piece in pieces))
        digests = _digests(f"{provider}\n{conversation.model}", pieces, rules)
        if rules.breakpoints:
            read, write, hour = self._at_breakpoints(pieces, ends, digests, minimum)
        else:
            read, write, hour = self._by_prefix(ends, digests, minimum, rules.step), 0, 0
        return replace(estimate, cache_read_tokens=read, cache_write_tokens=write, cache_write_1h_tokens=hour)

    def _at_breakpoints(
        self, pieces: list[PromptPiece], ends: list[int], digests: list[bytes], minimum: int
    ) -> tuple[int, int, int]:
        """Anthropic's way: (read, written, written for an hour)."""
        breakpoints = [index for index, piece in enumerate(pieces) if piece.breakpoint is not None]
        # an entry ends at a block, a message's closing framing is none: blocks so far, at each piece
        blocks = list(accumulate(not isinstance(piece.content, Role) for piece in pieces))
        looked = {
            index
            for end in breakpoints
            for index in range(end + 1)
            if not isinstance(pieces[index].content, Role) and blocks[end] - blocks[index] < ANTHROPIC_LOOKBACK
        }
        found = max((index for index in looked if digests[index] in self._held), default=-1)
        read = ends[found] if found >= 0 else 0
        written = [end for end in breakpoints if ends[end] >= minimum]
        write = hour = 0
        start = read
        for end in written:
            if end > found:
                write += ends[end] - start
                hour += ends[end] - start if _lasts_an_hour(pieces[end]) else 0
                start = ends[end]
            self._held.add(digests[end])
        return read, write, hour

    def _by_prefix(self, ends: list[int], digests: list[bytes], minimum: int, step: int) -> int:
        """OpenAI's and Gemini's way: the cached part of the longest prefix an earlier prompt began with."""
        shared = max((ends[index] for index, digest in enumerate(digests) if digest in self._held), default=0)
        if ends and ends[-1] >= minimum:
            self._held.update(digests)
        return minimum + (shared - minimum) // step * step if shared >= minimum else 0


def _digests(seed: str, pieces: list[PromptPiece], rules: _Rules) -> list[bytes]:
    """Each prefix of the prompt as a digest: equal prompts up to a piece give equal digests there."""
    running = hashlib.blake2b(seed.encode(), digest_size=16)
    digests = []
    for piece in pieces:
        running.update(b"\x00" + (b"metadata" if rules.metadata(piece.content) else repr(piece.content).encode()))
        digests.append(running.copy().digest())
    return digests


def _lasts_an_hour(piece: PromptPiece) -> bool:
    return piece.breakpoint is not None and piece.breakpoint.ttl == "1h"


def _version(model: str) -> tuple[int, int] | None:
    """A model name's version, `claude-haiku-4-5-20251001` or `claude-3-5-haiku` → (4, 5), (3, 5); None for a
    name without one (an alias of the newest)."""
    numbers = [int(word) for word in re.split(r"[-.@:_]", model) if word.isdigit() and len(word) <= 2]
    return (numbers[0], numbers[1] if len(numbers) > 1 else 0) if numbers else None


def _claude_minimum(model: str) -> int:
    version = _version(model) or (99, 0)
    if "haiku" in model:
        return 4_096 if version >= (4, 5) else 2_048
    return 4_096 if "opus" in model and version >= (4, 5) else 1_024


def _gemini_minimum(model: str) -> int | None:
    version = _version(model) or (99, 0)
    if version < (2, 5):
        return None
    return 4_096 if "pro" in model or version >= (3, 5) else 1_024


def _billing_header(content: object) -> bool:
    return isinstance(content, TextPart) and content.text.startswith(BILLING_HEADER)


def _openai_minimum(model: str) -> int:
    return 1_024


_CLAUDE = _Rules(_claude_minimum, breakpoints=True, metadata=_billing_header)
_OPENAI = _Rules(_openai_minimum, step=OPENAI_STEP)
_GEMINI = _Rules(_gemini_minimum)
_RULES: dict[Provider, _Rules] = {
    Provider.ANTHROPIC: _CLAUDE,
    Provider.BEDROCK: _CLAUDE,
    Provider.OPENAI: _OPENAI,
    Provider.AZURE: _OPENAI,
    Provider.GEMINI: _GEMINI,
    Provider.GEMINI_CODE_ASSIST: _GEMINI,
}
"""Providers without prompt caching llmproxy knows of (Ollama, Cohere) report the estimate as it is."""
