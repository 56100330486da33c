"""Collecting response content blocks into a Completion, shared by the body and the stream decoders.

Blocks arrive in wire order; the Completion keeps one text, one reasoning and the tool calls. Pieces are
gathered in lists and joined once, so long streams cost linear time.
"""

from dataclasses import dataclass, field

from llmproxy.model import Completion, ProviderError, StopReason, ToolCall, Usage


@dataclass(slots=True)
class Assembly:
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    signature: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)

    def add_thinking(self, pieces: list[str], signature: str | None) -> None:
        """Several thinking blocks join into one reasoning text; the last signature is the one kept."""
        self.reasoning.extend(pieces)
        if signature:
            self.signature = signature

    def add_redacted(self, data: str) -> None:
        if data:
            self.signature = data

    def completion(
        self,
        *,
        id: str | None,
        model: str | None,
        stop_reason: StopReason | None,
        usage: Usage | None,
        error: ProviderError | None = None,
    ) -> Completion:
        return Completion(
            id=id,
            model=model or None,
            text="".join(self.text),
            tool_calls=tuple(self.tool_calls),
            stop_reason=stop_reason,
            reasoning="".join(self.reasoning) or None,
            reasoning_signature=self.signature,
            usage=usage,
            error=error,
        )
