"""Collecting GenerateContentResponse objects into a Completion: one for a body, one per chunk for a stream.

A streamed chunk is a complete response whose parts are a delta, so the body and stream decoders (and
Code Assist's, once unwrapped) share this. Only the first candidate counts (others are alternatives, not
parts). Pieces are gathered in lists and joined once, so long streams cost linear time.

A part of a kind a Completion has no field for (`executableCode`, `codeExecutionResult`, `inlineData`,
`fileData`…) is kept whole in `Completion.parts`, in order with the rest, so the answer can be sent again
exactly; then a known part that says more than its neutral form (a text or call carrying a thought
signature) is kept whole too. Consecutive text or thought parts (a stream's deltas) are one part.

The candidate's own fields beside its content — `groundingMetadata` (search queries and results),
`citationMetadata`, `urlContextMetadata`, `finishMessage`, any future one — are kept as fields
(`kept_fields`); in a stream the last chunk that sets one has the final value. Its scores (`safetyRatings`,
which every Vertex answer carries, `avgLogprobs`, `logprobsResult`) are not kept.
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
from llmproxy.providers.gemini.wire import decode_call, decode_usage, get, stop_reason
from llmproxy.providers.node import Node

_SIGNATURE: Final = frozenset({"thoughtSignature", "thought_signature"})
KNOWN_FIELDS: Final = frozenset({"text", "thought", "functionCall", "function_call", *_SIGNATURE})
"""The fields of the parts a Completion can say: any other (set) makes a part opaque."""
CANDIDATE_FIELDS: Final = frozenset({"content", "finishReason", "finish_reason", "index"})
"""The candidate fields a Completion says."""
SCORES: Final = frozenset(
    {"safetyRatings", "safety_ratings", "avgLogprobs", "avg_logprobs", "logprobsResult", "logprobs_result"}
)
"""Candidate fields not kept: scores of the answer (safety ratings, log probabilities), not content."""


@dataclass(slots=True)
class _Run:
    """Consecutive text (or thought) parts, joined once at the end."""

    thought: bool
    pieces: list[str] = field(default_factory=list)
    signature: str | None = None

    def part(self) -> ContentPart:
        text = "".join(self.pieces)
        return ReasoningPart(text, self.signature) if self.thought else TextPart(text)


@dataclass(slots=True)
class Assembly:
    id: str | None = None
    model: str | None = None
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    signature: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish: str | None = None
    blocked: bool = False
    usage: Usage | None = None
    parts: "list[ContentPart | _Run]" = field(default_factory=list)
    fields: list[OtherPart] = field(default_factory=list)
    opaque: bool = False

    def add(self, node: Node, *, id: str | None = None) -> None:
        """One response object; `id` stands in for a missing `responseId` (Code Assist's `traceId`)."""
        node.obj()
        self.id = self.id or get(node, "responseId").opt_string() or id
        self.model = self.model or get(node, "modelVersion").opt_string()
        usage = decode_usage(get(node, "usageMetadata"))
        self.usage = usage or self.usage  # each chunk's counts are cumulative: the last one is the total
        self.blocked = self.blocked or get(get(node, "promptFeedback"), "blockReason").present
        for position, candidate in enumerate(node["candidates"].items()):
            if candidate["index"].opt_integer(position) == 0:
                self._candidate(candidate)
                break

    def _candidate(self, node: Node) -> None:
        finish = get(node, "finishReason").opt_string()
        self.finish = finish or self.finish
        kept = kept_fields.keep("candidate", node.obj(), CANDIDATE_FIELDS | SCORES)
        self.fields.extend(kept)
        self.opaque = self.opaque or bool(kept)
        for part in node["content"]["parts"].items():
            part.obj()
            signature = get(part, "thoughtSignature").opt_string()
            self.signature = self.signature or signature or None
            text = part["text"].opt_string()
            call = get(part, "functionCall")
            raw = part.obj()
            if says_more(raw, KNOWN_FIELDS):
                self._keep(None, raw)
            elif get(part, "thought").boolean():
                self.reasoning.append(text or "")
                self._keep(ReasoningPart(text or "", signature or None), raw)
            elif text is not None:
                self.text.append(text)
                self._keep(TextPart(text), raw)
            elif call.present:
                self.tool_calls.append(decode_call(call))
                self._keep(self.tool_calls[-1], raw)

    def _keep(self, part: TextPart | ReasoningPart | ToolCall | None, raw: JsonObject) -> None:
        """The part in wire order: opaque when it has no neutral form; kept whole when it says more than
        its neutral form (a signature on a text or call); consecutive texts and thoughts as one run."""
        if part is None:
            self.opaque = True
        elif isinstance(part, TextPart | ToolCall) and says_more(raw, KNOWN_FIELDS - _SIGNATURE):
            part = None
        last = self.parts[-1] if self.parts else None
        if part is None:
            self.parts.append(OtherPart(next(iter(raw), "part"), raw))
        elif isinstance(part, ToolCall):
            self.parts.append(part)
        else:
            thought = isinstance(part, ReasoningPart)
            if not isinstance(last, _Run) or last.thought != thought:
                last = _Run(thought)
                self.parts.append(last)
            last.pieces.append(part.text)
            if isinstance(part, ReasoningPart) and part.signature:
                last.signature = part.signature

    def completion(self, error: ProviderError | None = None) -> Completion:
        stop = stop_reason(self.finish, bool(self.tool_calls))
        if stop is None and self.blocked:  # the prompt was blocked: no candidate at all
            stop = StopReason.CONTENT_FILTER
        return Completion(
            id=self.id,
            model=self.model or None,
            text="".join(self.text),
            tool_calls=tuple(self.tool_calls),
            stop_reason=stop,
            reasoning="".join(self.reasoning) or None,
            reasoning_signature=self.signature,
            usage=self.usage,
            error=error,
            parts=kept_fields.ordered((p.part() if isinstance(p, _Run) else p for p in self.parts), self.fields)
            if self.opaque
            else (),
        )
