"""ConverseStream (docs/providers.md#aws-bedrock): event-stream frames, one union member each, in the order
messageStart → per block [contentBlockStart (tool use only)] contentBlockDelta… contentBlockStop →
messageStop → metadata. A failure is an exception (or error) frame at the point it happened.

Blocks a Completion cannot say are kept in a Converse body's shape, so a body and a stream of one answer
decode alike: a text block with `citation` deltas is a `citationsContent` block, a tool result's start and
content deltas a `toolResult` block, an image's an `image` block; any other started block whole. The
response's kept fields travel in `messageStop` (`additionalModelResponseFields`) and `metadata` (the rest).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from llmproxy.errors import UnsupportedError
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
from llmproxy.providers.anthropic.assemble import Assembly
from llmproxy.providers.anthropic.wire import parse_tool_json
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, JsonObject, dump_arguments, dump_json, says_more, split_deltas
from llmproxy.providers.bedrock.errors import CONVERSE_STREAM_EXCEPTIONS, failure_frame, read_failure
from llmproxy.providers.bedrock.request import union
from llmproxy.providers.bedrock.response import METRICS, RESPONSE_FIELDS, cited_text
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
    kind: str  # the member of its first start or delta: "text", "reasoningContent", "toolUse", "image"…
    pieces: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: str | None = None
    start: JsonObject | None = None  # contentBlockStart's member, as sent
    citations: list[Any] = field(default_factory=list)  # a text block's `citation` deltas
    items: list[Any] = field(default_factory=list)  # a tool result's content, a kept kind's deltas

    def kept(self) -> JsonObject | None:
        """The block as a Converse body holds it, when it is one a Completion cannot say; else None."""
        start = self.start or {}
        match self.kind:
            case "text":
                content = {"content": [{"text": "".join(self.pieces)}], "citations": self.citations}
                return {"citationsContent": content} if self.citations else None
            case "reasoningContent" | "toolUse" if self.start is None or not says_more(start, _TOOL_START):
                return None
            case "toolUse":
                arguments, invalid = parse_tool_json("".join(self.pieces))
                return {"toolUse": {**start, "input": arguments if invalid is None else {}}}
            case "toolResult":
                return {"toolResult": {**start, "content": self.items}}
        merged = dict(start)
        for item in self.items:
            merged.update(item if isinstance(item, dict) else {})
        return {self.kind: merged if merged or self.start is not None else self.items}


_TOOL_START: Final = ("toolUseId", "name")
_IN_STOP: Final = frozenset({"additionalModelResponseFields"})
"""Kept response fields `messageStop` carries; `metadata` carries the others (`trace`, `serviceTier`…)."""


@dataclass(slots=True)
class _State:
    blocks: dict[int, _Block] = field(default_factory=dict)
    stop_reason: StopReason | None = None
    usage: Usage | None = None
    fields: JsonObject = field(default_factory=dict)

    def apply(self, event_type: str, node: Node) -> None:
        match event_type:
            case "contentBlockStart":
                kind, start = union(node["start"])
                block = self._block(node["contentBlockIndex"], kind)
                block.start = start.obj()
            case "contentBlockDelta":
                kind, delta = union(node["delta"])
                if kind == "citation":  # a citation of the text block it belongs to
                    self._block(node["contentBlockIndex"], "text").citations.append(delta.value)
                    return
                block = self._block(node["contentBlockIndex"], kind)
                if kind == "toolUse" and block.start is None:
                    raise node["contentBlockIndex"].fail("the index of a started tool use block")
                self._delta(block, kind, delta)
            case "messageStop":
                self.stop_reason = decode_stop(node["stopReason"])
                self.fields.update(node.obj())
            case "metadata":
                self.usage = read_usage(node["usage"])
                self.fields.update(node.obj())
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
            case "toolResult":  # a list of content items (`ToolResultBlocksDelta`)
                block.items.extend(delta.value if isinstance(delta.value, list) else [delta.value])
            case _:  # images and kinds yet unknown: kept with their block
                block.items.append(delta.value)

    def completion(self, error: ProviderError | None) -> Completion:
        assembly = Assembly()
        for _, block in sorted(self.blocks.items()):
            kept = block.kept()
            if kept is not None:
                assembly.text.extend(cited_text(kept))
                assembly.add_other(kept, next(iter(kept)))
            elif block.kind == "text":
                assembly.add_text("".join(block.pieces))
            elif block.kind == "reasoningContent":
                if block.pieces or block.signature:
                    assembly.add_thinking(block.pieces, block.signature)
                if block.redacted is not None:
                    assembly.add_redacted(block.redacted)
            elif block.kind == "toolUse" and block.start is not None:
                arguments, invalid = parse_tool_json("".join(block.pieces))
                tool = (str(block.start.get("toolUseId", "")), str(block.start.get("name", "")))
                assembly.add_call(ToolCall(*tool, arguments, invalid))
        assembly.add_fields(self.fields, RESPONSE_FIELDS | {"stopReason"}, "response")
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
    parts = kept_fields.content(completion.parts) if completion.parts else _parts(completion)
    for index, part in enumerate(parts):
        start, deltas = _streamed(part, delta_chars)
        if start is not None:
            frames.append(event_frame("contentBlockStart", {"start": start, "contentBlockIndex": index}))
        frames.extend(event_frame("contentBlockDelta", {"delta": d, "contentBlockIndex": index}) for d in deltas)
        frames.append(event_frame("contentBlockStop", {"contentBlockIndex": index}))
    if completion.error is not None:
        frames.append(failure_frame(completion.error, CONVERSE_STREAM_EXCEPTIONS))
        return frames
    kept = kept_fields.at("response", completion.parts)
    stop = stop_member(completion.stop_reason) | {k: v for k, v in kept.items() if k in _IN_STOP}
    frames.append(event_frame("messageStop", stop))
    usage = wire_usage(converse_usage(completion.usage))
    metadata = {"usage": usage, "metrics": METRICS} | {k: v for k, v in kept.items() if k not in _IN_STOP}
    frames.append(event_frame("metadata", metadata))
    return frames


def _parts(completion: Completion) -> list[ContentPart]:
    """A completion without `parts` as the blocks it streams: reasoning, text, tool calls."""
    parts: list[ContentPart] = []
    if completion.reasoning or completion.reasoning_signature:
        parts.append(ReasoningPart(completion.reasoning or "", completion.reasoning_signature))
    if completion.text:
        parts.append(TextPart(completion.text))
    parts.extend(completion.tool_calls)
    return parts


def _streamed(part: ContentPart, delta_chars: int) -> tuple[JsonObject | None, list[JsonObject]]:
    """A block's `contentBlockStart` member (None: no start) and its deltas, as ConverseStream sends that
    kind: text, reasoning and tool input in pieces; a kept block's text in pieces and its citations one by
    one, a tool result's content item by item, an image's source whole; any other kept block whole in its
    start."""
    if isinstance(part, TextPart):
        return None, [{"text": p} for p in split_deltas(part.text, delta_chars)]
    if isinstance(part, ReasoningPart):
        deltas: list[JsonObject] = [{"reasoningContent": {"text": p}} for p in split_deltas(part.text, delta_chars)]
        if part.signature:
            signed = "signature" if part.text and not part.redacted else "redactedContent"
            deltas.append({"reasoningContent": {signed: part.signature}})
        return None, deltas
    if isinstance(part, ToolCall):
        pieces = split_deltas(dump_arguments(part), delta_chars)
        return {"toolUse": {"toolUseId": part.id, "name": part.name}}, [{"toolUse": {"input": p}} for p in pieces]
    if not isinstance(part, OtherPart):
        raise UnsupportedError(f"a Converse answer cannot hold a {type(part).__name__}")
    ((kind, value),) = part.raw.items()
    if kind == "citationsContent" and isinstance(value, dict):
        text = "".join(str(item.get("text", "")) for item in value.get("content") or () if isinstance(item, dict))
        deltas = [{"text": p} for p in split_deltas(text, delta_chars)]
        return None, deltas + [{"citation": citation} for citation in value.get("citations") or ()]
    if kind == "toolUse" and isinstance(value, dict):
        start = {key: item for key, item in value.items() if key != "input"}
        pieces = split_deltas(dump_json(value.get("input", {})).decode(), delta_chars)
        return {"toolUse": start}, [{"toolUse": {"input": p}} for p in pieces]
    if kind == "toolResult" and isinstance(value, dict):
        start = {key: item for key, item in value.items() if key != "content"}
        return {"toolResult": start}, [{"toolResult": [item]} for item in value.get("content") or ()]
    if kind == "image" and isinstance(value, dict):
        delta = {key: item for key, item in value.items() if key in ("source", "error")}
        start = {key: item for key, item in value.items() if key not in delta}
        return {"image": start}, [{"image": delta}] if delta else []
    return {kind: value}, []
