"""The usage a provider reports for a request, its prompt cache included: what a stand-in for the provider
answers with (the tests' scripted upstream, which records the example cassettes), so a recorded session
shows the cache reads and writes a real one would — large reads on an agent's later turns.

How each provider caches — the minimum per model, breakpoints or a shared prefix, the steps reads come in,
whether writes are reported — is the provider's own fact (llmproxy.providers.prompt_caching,
docs/providers.md#prompt-caching): Anthropic writes the prefix up to each breakpoint that reaches the model's
minimum and reads the longest prefix an earlier request wrote, found at a breakpoint or within its lookback;
OpenAI and Gemini read the longest prefix an earlier prompt began with.

Sizes are llmproxy's estimate, piece by piece (`usage.prompt_pieces`), so a prefix ends where a piece does.
One cache per provider and model; nothing expires (a stand-in's run lasts seconds, a cache minutes).
"""

import hashlib
from dataclasses import replace
from itertools import accumulate

from llmproxy.mock.usage import PromptPiece, estimate_usage, prompt_pieces
from llmproxy.model import Completion, Conversation, Provider, Role, TextPart, Usage
from llmproxy.providers.prompt_caching import PromptCaching, Writes
from llmproxy.providers.registry import facts


class PromptCache:
    """What one account's prompt caches hold, as the requests answered so far left them."""

    def __init__(self) -> None:
        self._held: set[bytes] = set()  # the cached prefixes, each a digest of provider, model and prompt

    def usage(self, provider: Provider | None, conversation: Conversation, completion: Completion) -> Usage:
        """The usage `provider` reports for answering `conversation` with `completion` (sizes estimated, so
        marked as an estimate), the cache updated as the provider's would be."""
        estimate = estimate_usage(conversation, completion)
        rules = facts(provider).prompt_caching(conversation.model or "")
        if rules.writes not in (Writes.BREAKPOINTS, Writes.SHARED_PREFIX):
            return estimate  # no cache, or only one the client creates by name
        pieces = list(prompt_pieces(conversation))
        ends = list(accumulate(piece.tokens for piece in pieces))
        digests = _digests(f"{provider}\n{conversation.model}", pieces, rules.metadata)
        if rules.writes is Writes.BREAKPOINTS:
            read, write, hour = self._at_breakpoints(pieces, ends, digests, rules)
        else:
            read, write, hour = *self._by_prefix(ends, digests, rules), 0
        return replace(estimate, cache_read_tokens=read, cache_write_tokens=write, cache_write_1h_tokens=hour)

    def _at_breakpoints(
        self, pieces: list[PromptPiece], ends: list[int], digests: list[bytes], rules: PromptCaching
    ) -> tuple[int, int, int]:
        """Anthropic's way: (read, written, written for an hour)."""
        breakpoints = [index for index, piece in enumerate(pieces) if piece.breakpoint is not None]
        # an entry ends at a block, a message's closing framing is none: blocks so far, at each piece
        blocks = list(accumulate(not isinstance(piece.content, Role) for piece in pieces))
        looked = {
            index
            for end in breakpoints
            for index in range(end + 1)
            if not isinstance(pieces[index].content, Role) and blocks[end] - blocks[index] < rules.lookback
        }
        found = max((index for index in looked if digests[index] in self._held), default=-1)
        read = ends[found] if found >= 0 else 0
        written = [end for end in breakpoints if ends[end] >= rules.minimum]
        write = hour = 0
        start = read
        for end in written:
            if end > found:
                write += ends[end] - start
                hour += ends[end] - start if _lasts_an_hour(pieces[end]) else 0
                start = ends[end]
            self._held.add(digests[end])
        return read, write, hour

    def _by_prefix(self, ends: list[int], digests: list[bytes], rules: PromptCaching) -> tuple[int, int]:
        """OpenAI's and Gemini's way: (read, written) — the cached part of the longest prefix an earlier prompt
        began with, and the rest of a prompt long enough to cache, where the usage reports writes."""
        shared = max((ends[index] for index, digest in enumerate(digests) if digest in self._held), default=0)
        minimum, step = rules.minimum, rules.step
        read = minimum + (shared - minimum) // step * step if shared >= minimum else 0
        if not ends or ends[-1] < minimum:
            return read, 0
        self._held.update(digests)
        return read, ends[-1] - read if rules.reports_writes else 0


def _digests(seed: str, pieces: list[PromptPiece], metadata: str | None) -> list[bytes]:
    """Each prefix of the prompt as a digest: equal prompts up to a piece give equal digests there. A block the
    API reads as metadata (one starting with `metadata`: Claude Code's billing header) is the same whatever it
    says."""
    running = hashlib.blake2b(seed.encode(), digest_size=16)
    digests = []
    for piece in pieces:
        content = piece.content
        aside = metadata is not None and isinstance(content, TextPart) and content.text.startswith(metadata)
        running.update(b"\x00" + (b"metadata" if aside else repr(content).encode()))
        digests.append(running.copy().digest())
    return digests


def _lasts_an_hour(piece: PromptPiece) -> bool:
    return piece.breakpoint is not None and piece.breakpoint.ttl == "1h"
