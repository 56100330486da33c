"""Collecting response content blocks into a Completion, shared by the body and the stream decoders.

Blocks arrive in wire order; the Completion keeps one text, one reasoning and the tool calls. Pieces are
gathered in lists and joined once, so long streams cost linear time. A block with no neutral meaning
(`server_tool_use`, `web_search_tool_result`, `container_upload`, `compaction`…) or a known one carrying
more than the Completion keeps (a text block's `citations`) is kept whole in `Completion.parts`, in order
with the rest, so the answer can be sent again exactly; what it says (a cited text) still counts. So is
each field of the message beside its content that a Completion does not say (`container`,
`context_management`, `stop_details`, a matched `stop_sequence`, any future one), as a kept field.
"""

from dataclasses import dataclass, field
from typing import Final

from llmproxy.model import (
    Completion,
    ContentPart,
    OtherPart,
    ProviderError,
    ReasoningPart,
    StopReason,
    TextPart,
    ToolCall,
    Usage,
)
from llmproxy.providers import kept_fields
from llmproxy.providers.base import JsonObject, says_more

KNOWN_FIELDS: Final[dict[str, frozenset[str]]] = {
    "text": frozenset({"type", "text"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
    "tool_use": frozenset({"type", "id", "name", "input"}),
}
"""What a block's neutral part says in full: a block with anything more (set, not null or empty) is kept."""
MESSAGE_FIELDS: Final = frozenset({"id", "type", "role", "model", "content", "stop_reason", "usage"})
"""The message fields a Completion says; any other set one is kept (`kept_fields`, on `message`)."""


def kept_whole(block: JsonObject) -> bool:
    """Whether a block says more than its neutral part can (or has no neutral part at all)."""
    known = KNOWN_FIELDS.get(block.get("type"))  # type: ignore[arg-type]
    return known is None or says_more(block, known)


@dataclass(slots=True)
class Assembly:
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    signature: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    parts: list[ContentPart] = field(default_factory=list)
    fields: list[OtherPart] = field(default_factory=list)
    opaque: bool = False

    def add_text(self, text: str, block: JsonObject | None = None) -> None:
        self.text.append(text)
        self._part(TextPart(text), block)

    def add_thinking(self, pieces: list[str], signature: str | None, block: JsonObject | None = None) -> None:
        """Several thinking blocks join into one reasoning text; the last signature is the one kept."""
        self.reasoning.extend(pieces)
        if signature:
            self.signature = signature
        self._part(ReasoningPart("".join(pieces), signature or None), block)

    def add_redacted(self, data: str, block: JsonObject | None = None) -> None:
        if data:
            self.signature = data
        self._part(ReasoningPart(signature=data, redacted=True), block)

    def add_call(self, call: ToolCall, block: JsonObject | None = None) -> None:
        self.tool_calls.append(call)
        self._part(call, block)

    def add_fields(self, obj: JsonObject, known: frozenset[str] = MESSAGE_FIELDS, where: str = "message") -> None:
        """The fields of `obj` beyond `known`, kept as fields on `where` (a stream sends them in several
        events; Converse's sit on its `response`)."""
        kept = kept_fields.keep(where, obj, known)
        self.fields.extend(kept)
        self.opaque = self.opaque or bool(kept)

    def add_other(self, block: JsonObject, kind: str | None = None) -> None:
        """`kind` names a block that has no `type` (Bedrock Converse's union members)."""
        self._part(None, block, kind)

    def _part(self, part: ContentPart | None, block: JsonObject | None, kind: str | None = None) -> None:
        if block is not None and (part is None or kept_whole(block)):
            self.parts.append(OtherPart(kind or str(block.get("type")), block))
            self.opaque = True
        elif part is not None:
            self.parts.append(part)

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
            parts=kept_fields.ordered(self.parts, self.fields) if self.opaque else (),
        )
