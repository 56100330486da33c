"""Collecting GenerateContentResponse objects into a Completion: one for a body, one per chunk for a stream.

A streamed chunk is a complete response whose parts are a delta, so the body and stream decoders (and
Code Assist's, once unwrapped) share this. Only the first candidate counts (others are alternatives, not
parts). Pieces are gathered in lists and joined once, so long streams cost linear time.
"""

from dataclasses import dataclass, field

from llmproxy.model import Completion, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.gemini.wire import decode_call, decode_usage, get, stop_reason
from llmproxy.providers.node import Node


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
        for part in node["content"]["parts"].items():
            part.obj()
            signature = get(part, "thoughtSignature").opt_string()
            self.signature = self.signature or signature or None
            text = part["text"].opt_string()
            call = get(part, "functionCall")
            if get(part, "thought").boolean():
                self.reasoning.append(text or "")
            elif text is not None:
                self.text.append(text)
            elif call.present:
                self.tool_calls.append(decode_call(call))
            # executableCode, inlineData and other parts have no place in a Completion

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
        )
