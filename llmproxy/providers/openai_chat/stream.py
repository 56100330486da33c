"""The streamed `chat.completion.chunk` sequence (docs/providers.md#openai-chat-completions), both ways.

Data-only SSE: no `event:` and never `id:` lines (after one the SDK crashes on later blank lines). The
decoder merges deltas as the SDK's accumulator does (text and argument fragments concatenated, tool calls
keyed by `index`, with id and name from their first delta) and keeps whatever arrived when the stream was cut.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from llmproxy.framing.sse import SseDecoder, encode_event, encode_json_event
from llmproxy.model import Completion, OtherPart, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers import message_parts
from llmproxy.providers.base import (
    DEFAULT_DELTA_CHARS,
    JsonObject,
    dump_arguments,
    parse_arguments,
    says_more,
    split_deltas,
)
from llmproxy.providers.node import Node
from llmproxy.providers.openai_chat import content
from llmproxy.providers.openai_chat.mapping import (
    WHAT_STREAM,
    decode_stream_error,
    decode_usage,
    encode_stream_error,
    encode_usage,
    finish_reason,
    header,
    stop_reason,
)
from llmproxy.providers.openai_chat.response import KNOWN_ITEMS, NEUTRAL

_DONE = encode_event("[DONE]")


def encode_stream(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    """Role chunk, text (or refusal) deltas, tool-call deltas, finish chunk, usage chunk, `[DONE]`.

    The usage chunk is sent only when the request asked for it (`stream_options.include_usage`); without a
    request it is sent, so the Completion round-trips. A completion that ended in an error stops after its
    content with the error chunk: no finish, no usage, no `[DONE]` (the SDK raises there and reads no further).
    """
    ident, created, model = header(completion, request)
    with_usage = _include_usage(request)
    base: JsonObject = {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "service_tier": "default",
        "system_fingerprint": None,
    }

    # Every chunk is the same event around its delta and finish reason: framed and serialised once, they are
    # spliced in (a chunk's JSON built and dumped whole was most of the cost of a streamed answer).
    before = b"data: " + orjson.dumps(base)[:-1] + b',"choices":[{"index":0,"delta":'
    after = (b'}],"usage":null}' if with_usage else b"}]}") + b"\n\n"

    def chunk(delta: JsonObject, finish: str | None = None) -> bytes:
        return b'%s%s,"logprobs":null,"finish_reason":%s%s' % (before, orjson.dumps(delta), orjson.dumps(finish), after)

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    refused = completion.stop_reason is StopReason.REFUSAL
    # A refusal is sent even when empty: its presence is what marks the answer as a refusal.
    items = message_parts.items(completion.parts)
    if items:  # a content list with kept items: text in pieces, each kept item whole in a list of its own
        for item in items:
            if isinstance(item, OtherPart):
                events.append(chunk({"content": [item.raw]}))
            else:
                events.extend(
                    chunk({"content": piece}) for piece in split_deltas(getattr(item, "text", ""), delta_chars)
                )
    else:
        pieces = split_deltas(completion.text, delta_chars) or ([""] if refused else [])
        events.extend(chunk({"refusal" if refused else "content": piece}) for piece in pieces)
    # kept message fields (annotations, audio…), each whole in one delta
    events.extend(
        chunk(part.raw) for part in completion.parts if isinstance(part, OtherPart) and "type" not in part.raw
    )
    for index, call in enumerate(completion.tool_calls):
        opening = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        events.append(chunk({"tool_calls": [opening]}))
        events.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in split_deltas(dump_arguments(call), delta_chars)
        )
    if completion.error is not None:
        events.append(encode_event(encode_stream_error(completion.error).decode()))
        return events
    if completion.stop_reason is not None:
        events.append(chunk({}, finish_reason(completion.stop_reason)))
    if with_usage and completion.usage is not None:
        events.append(_event({**base, "choices": [], "usage": encode_usage(completion.usage)}))
    events.append(_DONE)
    return events


def decode_stream(chunks: Iterable[bytes]) -> Completion:
    """Chunks as they arrived, split anywhere. Stops at `[DONE]` or an error chunk (the SDK stops there too);
    a stream cut short gives the complete events that arrived."""
    decoder = SseDecoder()
    merged = _Merged()
    for piece in chunks:
        for event in decoder.feed(piece):
            if merged.add(event.data):
                return merged.completion()
    decoder.close()  # an event cut off by the end of the stream never reached a client either
    return merged.completion()


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def add(self, node: Node, function: Node) -> None:
        self.id = self.id or node["id"].opt_string() or ""
        self.name = self.name or function["name"].opt_string() or ""
        fragment = function["arguments"].opt_string()
        if fragment:
            self.arguments.append(fragment)

    def tool_call(self) -> ToolCall:
        arguments, invalid = parse_arguments("".join(self.arguments))
        return ToolCall(self.id, self.name, arguments, invalid)


@dataclass
class _Merged:
    """Everything choice 0 said so far. Text pieces are kept in lists and joined once, at the end."""

    id: str | None = None
    model: str | None = None
    created: int | None = None
    said: content.Said = field(default_factory=content.Said)
    refusal: list[str] | None = None
    calls: dict[int, _Call] = field(default_factory=dict)
    legacy_call: _Call | None = None
    finish: str | None = None
    usage: Usage | None = None
    error: ProviderError | None = None
    kept: dict[str, Any] = field(default_factory=dict)  # message fields a Completion has no place for
    items: message_parts.Streamed = field(default_factory=lambda: message_parts.Streamed(KNOWN_ITEMS))

    def add(self, data: str) -> bool:
        """Merge one event's data; True when the stream is over (`[DONE]` or an error)."""
        if data.startswith("[DONE]"):
            return True
        if not data:
            return False  # an empty event carries nothing (keep-alives are comments, but be lenient)
        node = Node.parse(data, WHAT_STREAM)
        value = node.obj()
        if value.get("error"):  # OpenRouter's error chunk is a whole chunk: its usage counts
            self.error = decode_stream_error(value, WHAT_STREAM)
            self.usage = decode_usage(node["usage"]) or self.usage
            return True
        if self.id is None:
            self.id = node["id"].opt_string()
            self.model = node["model"].opt_string() or None
            self.created = node["created"].integer() if node["created"].present else None
        for position, choice in enumerate(node["choices"].items()):
            if choice["index"].opt_integer(position) == 0:
                self._add_delta(choice["delta"])
                self.finish = choice["finish_reason"].opt_string() or self.finish
        self.usage = decode_usage(node["usage"]) or self.usage
        return False

    def _add_delta(self, delta: Node) -> None:
        if delta.present:
            content.read(delta, self.said)
            self.items.add(delta.obj().get("content"))
            self._keep(delta.obj())
        refusal = delta["refusal"].opt_string()
        if refusal is not None:
            if self.refusal is None:
                self.refusal = []
            self.refusal.append(refusal)
        for position, call in enumerate(delta["tool_calls"].items()):
            self.calls.setdefault(call["index"].opt_integer(position), _Call()).add(call, call["function"])
        legacy = delta["function_call"]
        if legacy.present:
            self.legacy_call = self.legacy_call or _Call()
            self.legacy_call.add(legacy, legacy)

    def _keep(self, delta: JsonObject) -> None:
        """A kept field's pieces: lists (annotations) add up; any other value is the latest one."""
        for name, value in delta.items():
            if name != "content" and says_more({name: value}, NEUTRAL):
                before = self.kept.get(name)
                self.kept[name] = before + value if isinstance(before, list) and isinstance(value, list) else value

    def completion(self) -> Completion:
        calls = [self.calls[index].tool_call() for index in sorted(self.calls)]
        if self.legacy_call is not None:
            calls.append(self.legacy_call.tool_call())
        return Completion(
            id=self.id,
            model=self.model,
            created=self.created,
            text="".join(self.said.text) + "".join(self.refusal or ()),
            reasoning="".join(self.said.reasoning) or None,
            reasoning_signature=self.said.signature,
            tool_calls=tuple(calls),
            stop_reason=stop_reason(self.finish, refused=self.refusal is not None),
            usage=self.usage,
            error=self.error,
            parts=(*self.items.read(), *message_parts.fields(self.kept, NEUTRAL)),
        )


def _include_usage(request: JsonObject | None) -> bool:
    if request is None:
        return True
    options = request.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _event(body: JsonObject) -> bytes:
    return encode_json_event(body)
