"""Streamed Anthropic Messages (§2.3): reassembling SSE bytes split anywhere, and encoding the exact event
sequence the SDKs expect (message_start, blocks in index order, message_delta, message_stop)."""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final

from llmproxy.framing.sse import SseDecoder, SseEvent, encode_json_event
from llmproxy.model import Completion, ProviderError, StopReason, ToolCall
from llmproxy.providers.anthropic.assemble import Assembly
from llmproxy.providers.anthropic.errors import error_object, read_error
from llmproxy.providers.anthropic.response import message_id, message_model
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
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, JsonObject, dump_arguments, split_deltas
from llmproxy.providers.node import Node

WHAT: Final = "anthropic stream"


@dataclass(slots=True)
class _Block:
    """One content block being streamed: its start payload plus the delta pieces so far."""

    start: Node
    kind: str
    pieces: list[str] = field(default_factory=list)
    signature: str | None = None
    streamed_json: bool = False


@dataclass(slots=True)
class _State:
    id: str | None = None
    model: str | None = None
    started: bool = False
    stop_reason: StopReason | None = None
    counters: dict[str, int] = field(default_factory=dict)
    blocks: dict[int, _Block] = field(default_factory=dict)
    error: ProviderError | None = None

    def apply(self, node: Node) -> None:
        match node["type"].string():
            case "message_start":
                message = node["message"]
                self.started = True
                self.id = message["id"].opt_string()
                self.model = message["model"].opt_string()
                read_counters(message["usage"], self.counters)
            case "content_block_start":
                start = node["content_block"]
                self.blocks[node["index"].integer()] = _Block(start, start["type"].string())
            case "content_block_delta":
                self._delta(node)
            case "message_delta":
                self.stop_reason = decode_stop(node["delta"]["stop_reason"].opt_string())
                read_counters(node["usage"], self.counters)
            case "error":
                self.error = read_error(node, None)
            case _:  # ping, content_block_stop, message_stop and future events change nothing
                pass

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
            case _:  # citations_delta and future deltas carry nothing a Completion keeps
                pass

    def completion(self) -> Completion:
        assembly = Assembly()
        for _, block in sorted(self.blocks.items()):
            start = block.start
            match block.kind:
                case "text":
                    assembly.text.append(start["text"].opt_string() or "")
                    assembly.text.extend(block.pieces)
                case "thinking":
                    pieces = [start["thinking"].opt_string() or "", *block.pieces]
                    assembly.add_thinking(pieces, block.signature or start["signature"].opt_string())
                case "redacted_thinking":
                    assembly.add_redacted(start["data"].string())
                case "tool_use":
                    if block.streamed_json:
                        arguments, invalid = parse_tool_json("".join(block.pieces))
                    else:  # nothing streamed (a cut stream): the start's input is all there is
                        arguments, invalid = tool_arguments(start["input"].opt_obj() or {})
                    call = ToolCall(start["id"].string(), start["name"].string(), arguments, invalid)
                    assembly.tool_calls.append(call)
                case _:
                    pass
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
    emit({"type": "message_start", "message": message})
    index = 0
    reasoning, signature = completion.reasoning, completion.reasoning_signature
    if reasoning:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in split_deltas(reasoning, delta_chars)]
        if signature:
            deltas.append({"type": "signature_delta", "signature": signature})
        block(index, {"type": "thinking", "thinking": "", "signature": ""}, deltas)
        index += 1
    elif signature:
        block(index, {"type": "redacted_thinking", "data": signature}, ())
        index += 1
    if completion.text:
        deltas = [{"type": "text_delta", "text": p} for p in split_deltas(completion.text, delta_chars)]
        block(index, {"type": "text", "text": ""}, deltas)
        index += 1
    for call in completion.tool_calls:
        pieces = split_deltas(dump_arguments(call), delta_chars)
        start = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        block(index, start, ({"type": "input_json_delta", "partial_json": p} for p in pieces))
        index += 1
    if completion.error is not None:
        emit(error_object(completion.error.kind, completion.error.message))
        return events
    delta = {"stop_reason": encode_stop(completion.stop_reason), "stop_sequence": None}
    emit({"type": "message_delta", "delta": delta, "usage": wire_usage(usage)})
    emit({"type": "message_stop"})
    return events
