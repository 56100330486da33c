"""ConverseStream (wire-formats.md §6.2): event-stream frames, one union member each, in the order
messageStart → per block [contentBlockStart (tool use only)] contentBlockDelta… contentBlockStop →
messageStop → metadata. A failure is an exception (or error) frame at the point it happened."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from llmproxy.model import Completion, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.anthropic.assemble import Assembly
from llmproxy.providers.anthropic.wire import parse_tool_json
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, JsonObject, dump_arguments, split_deltas
from llmproxy.providers.bedrock.errors import CONVERSE_STREAM_EXCEPTIONS, failure_frame, read_failure
from llmproxy.providers.bedrock.request import union
from llmproxy.providers.bedrock.response import METRICS
from llmproxy.providers.bedrock.wire import (
    converse_usage,
    decode_stop,
    event_frame,
    messages,
    read_usage,
    stop_member,
    wire_usage,
)
from llmproxy.providers.node import Node

WHAT: Final = "bedrock converse stream"


@dataclass(slots=True)
class _Block:
    kind: str  # "text", "reasoningContent" or "toolUse": set by the block's first start or delta
    pieces: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: str | None = None
    tool: tuple[str, str] | None = None  # (toolUseId, name) from contentBlockStart


@dataclass(slots=True)
class _State:
    blocks: dict[int, _Block] = field(default_factory=dict)
    stop_reason: StopReason | None = None
    usage: Usage | None = None

    def apply(self, event_type: str, node: Node) -> None:
        match event_type:
            case "contentBlockStart":
                kind, start = union(node["start"])
                block = self._block(node["contentBlockIndex"], kind)
                if kind == "toolUse":
                    block.tool = (start["toolUseId"].string(), start["name"].string())
            case "contentBlockDelta":
                kind, delta = union(node["delta"])
                block = self._block(node["contentBlockIndex"], kind)
                if kind == "toolUse" and block.tool is None:
                    raise node["contentBlockIndex"].fail("the index of a started tool use block")
                self._delta(block, kind, delta)
            case "messageStop":
                self.stop_reason = decode_stop(node["stopReason"])
            case "metadata":
                self.usage = read_usage(node["usage"])
            case _:  # messageStart, contentBlockStop and future events change nothing
                node.obj()

    def _block(self, index: Node, kind: str) -> _Block:
        block = self.blocks.setdefault(index.integer(), _Block(kind))
        if block.kind != kind:
            raise index.fail(f"a block of one kind (this index holds {block.kind}, not {kind})")
        return block

    @staticmethod
    def _delta(block: _Block, kind: str, delta: Node) -> None:
        match kind:
            case "text":
                block.pieces.append(delta.string())
            case "toolUse":
                block.pieces.append(delta["input"].string())
            case "reasoningContent":
                part, value = union(delta)
                if part == "text":
                    block.pieces.append(value.string())
                elif part == "signature":
                    block.signature = value.string()
                elif part == "redactedContent":
                    block.redacted = value.string()
            case _:  # citations, tool results, images: nothing a Completion keeps
                pass

    def completion(self, error: ProviderError | None) -> Completion:
        assembly = Assembly()
        for _, block in sorted(self.blocks.items()):
            if block.kind == "text":
                assembly.text.extend(block.pieces)
            elif block.kind == "reasoningContent":
                assembly.add_thinking(block.pieces, block.signature)
                assembly.add_redacted(block.redacted or "")
            elif block.kind == "toolUse" and block.tool is not None:
                arguments, invalid = parse_tool_json("".join(block.pieces))
                assembly.tool_calls.append(ToolCall(*block.tool, arguments, invalid))
        return assembly.completion(id=None, model=None, stop_reason=self.stop_reason, usage=self.usage, error=error)


def decode_stream(chunks: Iterable[bytes]) -> Completion:
    """Everything that arrived, even from a cut stream; reading stops at an exception or error frame."""
    state = _State()
    for message in messages(chunks):
        error = read_failure(message, WHAT)
        if error is not None:
            return state.completion(error)
        state.apply(message.string(":event-type") or "", Node.parse(message.payload, WHAT))
    return state.completion(None)


def encode_stream(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    del request  # the stream names nothing the request chose
    frames = [event_frame("messageStart", {"role": "assistant"})]

    def block(index: int, deltas: Iterable[JsonObject], start: JsonObject | None = None) -> None:
        if start is not None:
            frames.append(event_frame("contentBlockStart", {"start": start, "contentBlockIndex": index}))
        frames.extend(event_frame("contentBlockDelta", {"delta": d, "contentBlockIndex": index}) for d in deltas)
        frames.append(event_frame("contentBlockStop", {"contentBlockIndex": index}))

    index = 0
    reasoning, signature = completion.reasoning, completion.reasoning_signature
    if reasoning or signature:
        pieces = [{"reasoningContent": {"text": p}} for p in split_deltas(reasoning or "", delta_chars)]
        if signature:
            pieces.append({"reasoningContent": {"signature" if reasoning else "redactedContent": signature}})
        block(index, pieces)
        index += 1
    if completion.text:
        block(index, ({"text": p} for p in split_deltas(completion.text, delta_chars)))
        index += 1
    for call in completion.tool_calls:
        pieces = [{"toolUse": {"input": p}} for p in split_deltas(dump_arguments(call), delta_chars)]
        block(index, pieces, {"toolUse": {"toolUseId": call.id, "name": call.name}})
        index += 1
    if completion.error is not None:
        frames.append(failure_frame(completion.error, CONVERSE_STREAM_EXCEPTIONS))
        return frames
    frames.append(event_frame("messageStop", stop_member(completion.stop_reason)))
    usage = wire_usage(converse_usage(completion.usage))
    frames.append(event_frame("metadata", {"usage": usage, "metrics": METRICS}))
    return frames
