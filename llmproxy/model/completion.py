"""What a chat model answered, provider-neutral, and how much it cost in tokens."""

from dataclasses import dataclass
from enum import StrEnum

from llmproxy.model.content import ContentPart, OtherPart, ToolCall
from llmproxy.model.errors import ProviderError


class StopReason(StrEnum):
    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"
    TOOL_USE = "tool_use"
    CONTENT_FILTER = "content_filter"
    REFUSAL = "refusal"
    PAUSE_TURN = "pause_turn"
    CONTEXT_WINDOW_EXCEEDED = "context_window_exceeded"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts, with one meaning across providers.

    * `input_tokens` is the whole prompt, *including* cache reads and cache writes (Anthropic reports
      these three separately; OpenAI's `prompt_tokens` already includes `cached_tokens`).
    * `output_tokens` includes reasoning tokens (Gemini reports thoughts apart; they are added in).
    * `estimated` marks counts llmproxy computed itself rather than read off the wire.
    * `cache_write_1h_tokens` is the part of `cache_write_tokens` written with a one-hour lifetime
      (Anthropic's `cache_creation.ephemeral_1h_input_tokens`), priced above the default five minutes.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    estimated: bool = False
    cache_write_1h_tokens: int = 0

    @property
    def uncached_input_tokens(self) -> int:
        return max(0, self.input_tokens - self.cache_read_tokens - self.cache_write_tokens)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class Completion:
    """One assistant answer.

    The wire order the encoders use is: reasoning, text, tool calls. `error` is set when a stream ended
    with an in-band error event after (possibly) some content.

    `parts` is set only when the answer holds what the fields cannot say: blocks, items or fields with no
    neutral meaning (server tool use and its results, citations, compaction items…), kept whole as
    `OtherPart`s in wire order beside the `TextPart`s, `ReasoningPart`s and `ToolCall`s around them. An
    encoder that finds it sends the answer in that order, the opaque parts byte for byte; the fields above
    still say what the answer means (its text, reasoning, calls), for matching, mocks and reports.
    """

    id: str | None = None
    model: str | None = None
    created: int | None = None  # unix seconds, where the wire carries it (OpenAI)
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: StopReason | None = StopReason.END_TURN
    reasoning: str | None = None
    reasoning_signature: str | None = None
    usage: Usage | None = None
    error: ProviderError | None = None
    parts: tuple[ContentPart, ...] = ()

    @property
    def opaque(self) -> int:
        """How many parts have no neutral meaning (kept whole)."""
        return sum(1 for part in self.parts if isinstance(part, OtherPart))
