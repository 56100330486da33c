"""Cohere v2 chat streams (`"stream": true`): typed SSE events, each framed with `event:` and `data:`.

`message-start` → per content item (thinking, then text) `content-start`, `content-delta`s, `content-end` →
`tool-plan-delta`s → per tool call `tool-call-start`, `tool-call-delta`s (argument fragments),
`tool-call-end` → `message-end` with the finish reason and usage, or with `finish_reason: "ERROR"` and the
`error` message when the answer failed. `citation-start` events carry one citation each: together they are
the message's `citations`, kept whole as in a body; `debug` events carry nothing a Completion keeps.
A content list holding an item a Completion cannot say is streamed item by item, text in pieces and any
other item whole in its `content-start`; other kept message fields ride in `message-start`'s message.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from llmproxy.framing.sse import SseDecoder, encode_json_event
from llmproxy.model import (
    Completion,
    ContentPart,
    ErrorKind,
    OtherPart,
    ProviderError,
    StopReason,
    TextPart,
    ToolCall,
    Usage,
)
from llmproxy.providers import message_parts
from llmproxy.providers.base import (
    DEFAULT_DELTA_CHARS,
    JsonObject,
    dump_arguments,
    parse_arguments,
    says_more,
    split_deltas,
)
from llmproxy.providers.cohere_chat import wire
from llmproxy.providers.cohere_chat.response import KNOWN_ITEMS, NEUTRAL, answer_id, plan_reasoning
from llmproxy.providers.node import Node

WHAT: Final = "cohere chat stream"


def encode_stream(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    del request
    events: list[bytes] = []

    def emit(type_: str, **fields: Any) -> None:
        events.append(encode_json_event({"type": type_, **fields}, event=type_))

    def message(**fields: Any) -> JsonObject:
        return {"message": fields}

    start = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    kept = [part.raw for part in completion.parts if isinstance(part, OtherPart) and "type" not in part.raw]
    for raw in kept:  # kept message fields but the citations (their own events) start with the message
        start.update((name, value) for name, value in raw.items() if name != "citations")
    emit("message-start", id=answer_id(completion), delta=message(**start))
    items: list[tuple[str, str] | JsonObject] = []
    kept_items = message_parts.items(completion.parts)
    if kept_items:  # text in pieces, every other item whole in its start
        items.extend(
            item.raw if isinstance(item, OtherPart) else ("text", getattr(item, "text", "")) for item in kept_items
        )
    else:
        if completion.reasoning and not plan_reasoning(completion):
            items.append(("thinking", completion.reasoning))
        if completion.text:
            items.append(("text", completion.text))
    for index, item in enumerate(items):
        if isinstance(item, dict):
            emit("content-start", index=index, delta=message(content=item))
        else:
            kind, text = item
            emit("content-start", index=index, delta=message(content={"type": kind, kind: ""}))
            for piece in split_deltas(text, delta_chars):
                emit("content-delta", index=index, delta=message(content={kind: piece}))
        emit("content-end", index=index)
    for part in completion.parts:
        if isinstance(part, OtherPart) and part.kind == "citations" and isinstance(part.raw["citations"], list):
            for index, citation in enumerate(part.raw["citations"]):
                emit("citation-start", index=index, delta=message(citations=citation))
                emit("citation-end", index=index)
    if plan_reasoning(completion):
        for piece in split_deltas(completion.reasoning or "", delta_chars):
            emit("tool-plan-delta", delta=message(tool_plan=piece))
    for index, call in enumerate(completion.tool_calls):
        opening = {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        emit("tool-call-start", index=index, delta=message(tool_calls=opening))
        for piece in split_deltas(dump_arguments(call), delta_chars):
            emit("tool-call-delta", index=index, delta=message(tool_calls={"function": {"arguments": piece}}))
        emit("tool-call-end", index=index)
    end: JsonObject
    if completion.error is not None:
        end = {"finish_reason": "ERROR", "error": completion.error.message}
    else:
        end = {"finish_reason": wire.encode_stop(completion.stop_reason)}
        if completion.usage is not None:
            end["usage"] = wire.encode_usage(completion.usage)
    emit("message-end", delta=end)
    return events


@dataclass(slots=True)
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Item:
    """One content item: its start, and the text its deltas add."""

    start: JsonObject
    kind: str
    pieces: list[str] = field(default_factory=list)

    def kept(self) -> bool:
        return self.kind not in KNOWN_ITEMS or says_more(self.start, ("type", self.kind))

    def part(self) -> ContentPart:
        """The item as a body holds it: a plain text as a TextPart, any other whole."""
        whole = {**self.start}
        if self.kind in KNOWN_ITEMS:
            whole[self.kind] = (self.start.get(self.kind) or "") + "".join(self.pieces)
            if self.kind == "text" and not self.kept():
                return TextPart(whole["text"])
        return OtherPart(self.kind, whole)


_START_FIELDS: Final = frozenset({"role", "content", "tool_plan", "tool_calls", "citations"})


@dataclass(slots=True)
class _State:
    id: str | None = None
    items: dict[int, _Item] = field(default_factory=dict)
    fields: JsonObject = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    plan: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    finish: str | None = None
    usage: Usage | None = None
    error: ProviderError | None = None
    citations: list[Any] = field(default_factory=list)

    def apply(self, node: Node) -> None:
        delta = node["delta"]["message"]
        match node["type"].string():
            case "message-start":
                self.id = node["id"].opt_string()
                if delta.present:
                    self.fields.update(delta.obj())
            case "content-start":
                content = delta["content"]
                kind = content["type"].opt_string() or "text"
                self.items[node["index"].opt_integer()] = _Item(content.obj(), kind)
                self._content(kind, content)
            case "content-delta":
                item = self.items.get(node["index"].opt_integer())
                kind = item.kind if item is not None else "text"
                piece = self._content(kind, delta["content"])
                if item is not None and piece:
                    item.pieces.append(piece)
            case "tool-plan-delta":
                self.plan.append(delta["tool_plan"].opt_string() or "")
            case "tool-call-start" | "tool-call-delta":
                call = self.calls.setdefault(node["index"].opt_integer(len(self.calls)), _Call())
                opening = delta["tool_calls"]
                call.id = call.id or opening["id"].opt_string() or ""
                function = opening["function"]
                call.name = call.name or function["name"].opt_string() or ""
                call.arguments.append(function["arguments"].opt_string() or "")
            case "message-end":
                end = node["delta"]
                self.finish = end["finish_reason"].opt_string()
                self.usage = wire.decode_usage(end["usage"])
                message = end["error"].opt_string()
                if message is not None or self.finish in wire.ERROR_REASONS:
                    self.error = ProviderError(ErrorKind.SERVER_ERROR, message or "")
            case "citation-start":
                self.citations.append(delta["citations"].obj())
            case _:  # content-end, tool-call-end, citation-end, debug
                pass

    def _content(self, kind: str, content: Node) -> str | None:
        piece = content["thinking" if kind == "thinking" else "text"].opt_string()
        if piece:
            (self.thinking if kind == "thinking" else self.text).append(piece)
        return piece

    def completion(self) -> Completion:
        reasoning = [part for part in ("".join(self.thinking), "".join(self.plan)) if part]
        calls = []
        for _, call in sorted(self.calls.items()):
            arguments, invalid = parse_arguments("".join(call.arguments))
            calls.append(ToolCall(call.id, call.name, arguments, invalid))
        stop: StopReason | None = None if self.error is not None else wire.decode_stop(self.finish)
        return Completion(
            id=self.id,
            text="".join(self.text),
            tool_calls=tuple(calls),
            stop_reason=stop,
            reasoning="\n\n".join(reasoning) or None,
            usage=self.usage,
            error=self.error,
            parts=self._parts(),
        )

    def _parts(self) -> tuple[ContentPart, ...]:
        """The items when one of them is kept whole, then the kept fields (citations from their events)."""
        items = [self.items[index] for index in sorted(self.items)]
        fields = {name: value for name, value in self.fields.items() if name not in _START_FIELDS}
        if self.citations:
            fields["citations"] = self.citations
        kept = [item.part() for item in items] if any(item.kept() for item in items) else []
        return (*kept, *message_parts.fields(fields, NEUTRAL))


def decode_stream(chunks: Iterable[bytes]) -> Completion:
    """Everything that arrived, even from a cut stream."""
    state = _State()
    for data in _payloads(chunks):
        state.apply(Node.parse(data, WHAT))
    return state.completion()


def _payloads(chunks: Iterable[bytes]) -> Iterator[str]:
    decoder = SseDecoder()
    for chunk in chunks:
        for event in decoder.feed(chunk):
            if event.data == "[DONE]":
                return
            if event.data:
                yield event.data
    decoder.close()
