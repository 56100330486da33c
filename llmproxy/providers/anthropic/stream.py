"""Streamed Anthropic Messages (docs/providers.md#anthropic-messages): reassembling SSE bytes split anywhere, and
encoding the exact event sequence the SDKs expect (message_start, blocks in index order, message_delta,
message_stop)."""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from llmproxy.framing.sse import SseDecoder, SseEvent, encode_json_event
from llmproxy.model import Completion, ContentPart, ProviderError, ReasoningPart, StopReason, TextPart, ToolCall
from llmproxy.providers import kept_fields
from llmproxy.providers.anthropic.assemble import MESSAGE_FIELDS, Assembly
from llmproxy.providers.anthropic.errors import error_object, read_error
from llmproxy.providers.anthropic.response import message_id, message_model, part_block
from llmproxy.providers.anthropic.wire import (
    decode_stop,
    encode_stop,
    neutral_usage,
    parse_tool_json,
    read_counters,
    tool_arguments,
    visible_usage,
    wire_usage,
)
from llmproxy.providers.base import (
    DEFAULT_DELTA_CHARS,
    JsonObject,
    dump_arguments,
    dump_json,
    parse_arguments,
    split_deltas,
)
from llmproxy.providers.node import Node, Parsed

WHAT: Final = "anthropic stream"
# Where a stream carries the message's kept fields: these in `message_delta`'s delta, these beside it (as
# the SDK's accumulator reads them), any other in `message_start`'s message.
_IN_DELTA: Final = frozenset({"stop_sequence", "stop_details", "container"})
_BESIDE_DELTA: Final = frozenset({"context_management"})


@dataclass(slots=True)
class _Block:
    """One content block being streamed: its start payload plus the delta pieces so far."""

    start: Node
    kind: str
    pieces: list[str] = field(default_factory=list)
    signature: str | None = None
    streamed_json: bool = False
    citations: list[Any] = field(default_factory=list)
    replaced: JsonObject = field(default_factory=dict)  # fields a delta sets whole (compaction_delta)

    def final(self) -> JsonObject:
        """The block as a body would hold it: the start with what the deltas added."""
        block = dict(self.start.obj())
        joined = "".join(self.pieces)
        if self.kind == "text":
            block["text"] = (self.start["text"].opt_string() or "") + joined
        elif self.kind == "thinking":
            block["thinking"] = (self.start["thinking"].opt_string() or "") + joined
            if self.signature is not None:
                block["signature"] = self.signature
        elif self.streamed_json:
            parsed, invalid = parse_arguments(joined)
            if invalid is None:
                block["input"] = parsed
        if self.citations:
            block["citations"] = [*(block.get("citations") or ()), *self.citations]
        block.update(self.replaced)
        return block


@dataclass(slots=True)
class _State:
    id: str | None = None
    model: str | None = None
    started: bool = False
    stop_reason: StopReason | None = None
    counters: dict[str, int] = field(default_factory=dict)
    blocks: dict[int, _Block] = field(default_factory=dict)
    error: ProviderError | None = None
    fields: JsonObject = field(default_factory=dict)  # the message's fields a Completion does not say

    def apply(self, node: Node) -> None:
        if self._text_piece(node.value):
            return
        match node["type"].string():
            case "message_start":
                message = node["message"]
                self.started = True
                self.id = message["id"].opt_string()
                self.model = message["model"].opt_string()
                read_counters(message["usage"], self.counters)
                self._fields(message.obj(), MESSAGE_FIELDS)
            case "content_block_start":
                start = node["content_block"]
                self.blocks[node["index"].integer()] = _Block(start, start["type"].string())
            case "content_block_delta":
                self._delta(node)
            case "message_delta":
                self.stop_reason = decode_stop(node["delta"]["stop_reason"].opt_string())
                read_counters(node["usage"], self.counters)
                self._fields(node["delta"].obj(), frozenset({"stop_reason"}))
                self._fields(node.obj(), frozenset({"type", "delta", "usage"}))
            case "error":
                self.error = read_error(node, None)
            case _:  # ping, content_block_stop, message_stop and future events change nothing
                pass

    def _text_piece(self, value: Any) -> bool:
        """Whether the event is a text delta of a started block, read straight off its JSON and added: most of
        a stream's events are, and walking each through `Node`s cost most of reading a stream. The same as
        `_delta` reads them; any other shape, and every mistake, goes through `apply`'s `Node`s."""
        if type(value) is not dict or value.get("type") != "content_block_delta":
            return False
        delta, index = value.get("delta"), value.get("index")
        if type(delta) is not dict or type(index) is not int or delta.get("type") != "text_delta":
            return False
        text, block = delta.get("text"), self.blocks.get(index)
        if type(text) is not str or block is None:
            return False
        block.pieces.append(text)
        return True

    def _fields(self, obj: JsonObject, known: frozenset[str]) -> None:
        self.fields.update((name, value) for name, value in obj.items() if name not in known and value is not None)

    def _delta(self, node: Node) -> None:
        index = node["index"]
        block = self.blocks.get(index.integer())
        if block is None:
            raise index.fail("the index of a started content block")
        delta = node["delta"]
        match delta["type"].string():
            case "text_delta":
                block.pieces.append(delta["text"].string())
            case "thinking_delta":
                block.pieces.append(delta["thinking"].string())
            case "signature_delta":
                block.signature = delta["signature"].string()
            case "input_json_delta":
                block.pieces.append(delta["partial_json"].string())
                block.streamed_json = True
            case "citations_delta":
                block.citations.append(delta["citation"].value)
            case "compaction_delta":  # the SDK sets both fields from it
                fields = ("content", "encrypted_content")
                block.replaced.update({key: delta[key].opt_string() for key in fields if delta[key].present})
            case _:  # future deltas
                pass

    def completion(self) -> Completion:
        assembly = Assembly()
        for _, block in sorted(self.blocks.items()):
            start, final = block.start, block.final()
            match block.kind:
                case "text":
                    assembly.add_text(final["text"], final)
                case "thinking":
                    assembly.add_thinking(
                        [final["thinking"]], block.signature or start["signature"].opt_string(), final
                    )
                case "redacted_thinking":
                    assembly.add_redacted(start["data"].string(), final)
                case "tool_use":
                    if block.streamed_json:
                        arguments, invalid = parse_tool_json("".join(block.pieces))
                    else:  # nothing streamed (a cut stream): the start's input is all there is
                        arguments, invalid = tool_arguments(start["input"].opt_obj() or {})
                    call = ToolCall(start["id"].string(), start["name"].string(), arguments, invalid)
                    assembly.add_call(call, final)
                case _:  # server tool use and results, containers, compaction…: kept whole
                    assembly.add_other(final)
        assembly.add_fields(self.fields, frozenset())
        return assembly.completion(
            id=self.id,
            model=self.model,
            stop_reason=self.stop_reason,
            usage=neutral_usage(self.counters) if self.started or self.counters else None,
            error=self.error,
        )


def decode_stream(chunks: Iterable[bytes]) -> Completion:
    """Everything that arrived, even from a cut stream; reading stops at an `error` event."""
    return read_events(Node.parse(event.data, WHAT) for event in _events(chunks) if event.data)


def read_payloads(payloads: Iterable[Parsed]) -> Completion:
    """`decode_stream` of the events' payloads, parsed (`ChatCodec.read_stream`)."""
    return read_events(Node.parse(payload, WHAT) for payload in payloads)


def read_events(events: Iterable[Node]) -> Completion:
    """A Completion from the stream's event payloads, however they were framed (Bedrock wraps them in
    event-stream chunks); reading stops at an `error` event."""
    state = _State()
    for event in events:
        state.apply(event)
        if state.error is not None:
            break
    return state.completion()


def _events(chunks: Iterable[bytes]) -> Iterator[SseEvent]:
    """The stream's complete events (one cut off by the end of the stream never reached a client either)."""
    decoder = SseDecoder()
    for chunk in chunks:
        yield from decoder.feed(chunk)
    decoder.close()


def encode_stream(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    payloads = stream_events(completion, request, delta_chars=delta_chars)
    return [encode_json_event(payload, payload["type"]) for payload in payloads]


def stream_events(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[JsonObject]:
    """The stream's event payloads in order, before framing; a failed completion ends with an `error` event."""
    events: list[JsonObject] = []
    emit = events.append

    def block(index: int, start: JsonObject, deltas: Iterable[JsonObject]) -> None:
        emit({"type": "content_block_start", "index": index, "content_block": start})
        for delta in deltas:
            emit({"type": "content_block_delta", "index": index, "delta": delta})
        emit({"type": "content_block_stop", "index": index})

    usage = visible_usage(completion.usage)
    kept = kept_fields.at("message", completion.parts)
    message: JsonObject = {
        "id": message_id(completion),
        "type": "message",
        "role": "assistant",
        "model": message_model(completion, request),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": wire_usage(usage, output_tokens=1),
    }
    message.update((name, value) for name, value in kept.items() if name not in _IN_DELTA | _BESIDE_DELTA)
    emit({"type": "message_start", "message": message})
    parts = kept_fields.content(completion.parts) if completion.parts else _parts(completion)
    for index, part in enumerate(parts):
        block(index, *_streamed(part, delta_chars))
    if completion.error is not None:
        emit(error_object(completion.error.kind, completion.error.message))
        return events
    delta = {"stop_reason": encode_stop(completion.stop_reason), "stop_sequence": None}
    delta.update((name, value) for name, value in kept.items() if name in _IN_DELTA)
    ending: JsonObject = {"type": "message_delta", "delta": delta, "usage": wire_usage(usage)}
    ending.update((name, value) for name, value in kept.items() if name in _BESIDE_DELTA)
    emit(ending)
    emit({"type": "message_stop"})
    return events


def _parts(completion: Completion) -> list[ContentPart]:
    """A completion without `parts` as the parts its blocks stream: reasoning, text, tool calls."""
    parts: list[ContentPart] = []
    if completion.reasoning:
        parts.append(ReasoningPart(completion.reasoning, completion.reasoning_signature))
    elif completion.reasoning_signature:
        parts.append(ReasoningPart(signature=completion.reasoning_signature, redacted=True))
    if completion.text:
        parts.append(TextPart(completion.text))
    parts.extend(completion.tool_calls)
    return parts


def _streamed(part: ContentPart, delta_chars: int) -> tuple[JsonObject, list[JsonObject]]:
    """A block's `content_block_start` payload and its deltas, as the API streams that kind of block: text,
    thinking and JSON input in pieces, citations one by one, anything else whole in its start."""
    block = part_block(part)
    kind = block.get("type")
    deltas: list[JsonObject] = []
    start = dict(block)
    if kind == "text":
        start["text"] = ""
        if isinstance(block.get("citations"), list):
            start["citations"] = []
            deltas += [{"type": "citations_delta", "citation": citation} for citation in block["citations"]]
        deltas += [{"type": "text_delta", "text": p} for p in split_deltas(block["text"], delta_chars)]
    elif kind == "thinking":
        start.update(thinking="", signature="")
        deltas += [{"type": "thinking_delta", "thinking": p} for p in split_deltas(block["thinking"], delta_chars)]
        if block.get("signature"):
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "compaction":  # its summary comes in one delta, as the API streams it
        delta: JsonObject = {key: block[key] for key in ("content", "encrypted_content") if key in block}
        start.update(dict.fromkeys(delta))
        deltas.append({"type": "compaction_delta", **delta})
    elif isinstance(block.get("input"), dict):  # tool_use, server_tool_use, mcp_tool_use…
        text = dump_arguments(part) if isinstance(part, ToolCall) else dump_json(block["input"]).decode()
        start["input"] = {}
        deltas += [{"type": "input_json_delta", "partial_json": p} for p in split_deltas(text, delta_chars)]
    return start, deltas
