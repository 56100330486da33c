"""Streams in every provider's wire format, built from the text pieces to send (a secret's split points):
shared by the redaction tests and the local upstream of the recording corpus test."""

import base64
import json
from collections.abc import Callable

import orjson

from llmproxy.framing.eventstream import encode_event


def sse(name: str | None, value: object, spaced: bool = False) -> bytes:
    # spaced as Google sends it: not the compact form the cassette can show parsed
    data = json.dumps(value, ensure_ascii=False) if spaced else orjson.dumps(value).decode()
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {data}\n\n".encode()


def delta(index: int, kind: str, field: str, piece: str) -> bytes:
    event = {"type": "content_block_delta", "index": index, "delta": {"type": kind, field: piece}}
    return sse("content_block_delta", event)


def anthropic(pieces: list[str]) -> list[bytes]:
    start = {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": []}}
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    deltas = [
        sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}},
        )
        for p in pieces
    ]
    stop = [
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]
    return [sse("message_start", start), sse("content_block_start", block), *deltas, *stop]


def openai_chat(pieces: list[str]) -> list[bytes]:
    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse(None, {"id": "c", "object": "chat.completion.chunk", "model": "gpt", "choices": [choice]})

    return [chunk({"role": "assistant", "content": ""}), *(chunk({"content": p}) for p in pieces), chunk({}, "stop")]


def responses(pieces: list[str]) -> list[bytes]:
    def event(kind: str, **fields: object) -> bytes:
        return sse(kind, {"type": kind, **fields})

    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    text = "".join(pieces)
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed"}
    done = {**item, "content": [{"type": "output_text", "text": text, "annotations": []}]}
    response = {"id": "resp_1", "object": "response", "status": "completed", "model": "gpt", "output": [done]}
    return [
        event("response.created", response={**response, "status": "in_progress", "output": []}),
        event("response.output_item.added", output_index=0, item={**item, "content": []}),
        *(event("response.output_text.delta", **where, delta=p) for p in pieces),
        event("response.output_text.done", **where, text=text),
        event("response.output_item.done", output_index=0, item=done),
        event("response.completed", response=response),
    ]


def gemini(pieces: list[str]) -> list[bytes]:
    def chunk(text: str, last: bool = False) -> bytes:
        candidate: dict[str, object] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
        if last:
            candidate["finishReason"] = "STOP"
        return sse(None, {"candidates": [candidate], "modelVersion": "gemini"}, spaced=True).replace(b"\n", b"\r\n")

    return [chunk(p, last=i == len(pieces) - 1) for i, p in enumerate(pieces)]


def converse(pieces: list[str]) -> list[bytes]:
    def message(kind: str, payload: dict[str, object]) -> bytes:
        headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
        return encode_event(headers, orjson.dumps({**payload, "p": "abcdef"}))

    return [
        message("messageStart", {"role": "assistant"}),
        *(message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}}) for p in pieces),
        message("contentBlockStop", {"contentBlockIndex": 0}),
        message("messageStop", {"stopReason": "end_turn"}),
    ]


def invoke(pieces: list[str]) -> list[bytes]:
    """Bedrock InvokeModelWithResponseStream: each Anthropic event as base64 JSON inside a chunk."""
    headers = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}
    return [
        encode_event(headers, orjson.dumps({"bytes": base64.b64encode(event.split(b"data: ", 1)[1].strip()).decode()}))
        for event in anthropic(pieces)
    ]


def ollama(pieces: list[str]) -> list[bytes]:
    lines = [{"model": "m", "message": {"role": "assistant", "content": p}, "done": False} for p in pieces]
    lines.append({"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"})
    return [orjson.dumps(line) + b"\n" for line in lines]


Builder = Callable[[list[str]], list[bytes]]
STREAMS: dict[str, tuple[Builder, str, str]] = {  # name → (builder, content type, codec)
    "anthropic": (anthropic, "text/event-stream", "anthropic-messages"),
    "openai-chat": (openai_chat, "text/event-stream", "openai-chat"),
    "openai-responses": (responses, "text/event-stream", "openai-responses"),
    "gemini": (gemini, "text/event-stream", "gemini-generate"),
    "bedrock-converse": (converse, "application/vnd.amazon.eventstream", "bedrock-converse"),
    "bedrock-invoke": (invoke, "application/vnd.amazon.eventstream", "bedrock-invoke-anthropic"),
    "ollama": (ollama, "application/x-ndjson", "ollama-chat"),
}
