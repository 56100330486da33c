"""Cohere v1 chat answers (`POST /v1/chat`), which the SDK's `Client.chat` and `chat_stream` still use.

A body is `{response_id, text, generation_id, finish_reason, tool_calls?, meta}`; a stream is NDJSON of
`stream-start`, `text-generation` pieces, `tool-calls-generation` (the calls, whole), then `stream-end`
carrying the finish reason and the whole answer. v1 has no reasoning and no tool-call ids; a failed answer
ends with `finish_reason: "ERROR"` (a stream's `stream-end` also names the error, as llmproxy sends it).
"""

from collections.abc import Iterable
from typing import Any, Final

from llmproxy.framing.ndjson import NdjsonDecoder, encode_line
from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, JsonObject, dump_json, split_deltas, stable_id
from llmproxy.providers.cohere_chat import wire
from llmproxy.providers.cohere_chat.request import call_v1
from llmproxy.providers.node import Node, Parsed

WHAT: Final = "cohere chat v1 response"
MEDIA_TYPE: Final = "application/stream+json"
_WIRE: Final = {
    StopReason.MAX_TOKENS: "MAX_TOKENS",
    StopReason.STOP_SEQUENCE: "STOP_SEQUENCE",
    StopReason.CONTENT_FILTER: "ERROR_TOXIC",
    StopReason.CONTEXT_WINDOW_EXCEEDED: "ERROR_LIMIT",
}


def _finish(completion: Completion) -> str:
    return "ERROR" if completion.error is not None else _WIRE.get(completion.stop_reason, "COMPLETE")  # type: ignore[arg-type]


def _stop(finish: str | None, called: bool) -> StopReason | None:
    """v1 ends a turn that calls tools with COMPLETE: the calls say it is tool use."""
    stop = wire.decode_stop(finish)
    return StopReason.TOOL_USE if called and stop is StopReason.END_TURN else stop


def visible_stop(completion: Completion) -> StopReason | None:
    if completion.error is not None:
        return None
    return _stop(_finish(completion), bool(completion.tool_calls))


def answer_id(completion: Completion) -> str:
    return completion.id or stable_id("", completion.model, completion.text, completion.tool_calls)


def _body(completion: Completion) -> JsonObject:
    ident = answer_id(completion)
    body: JsonObject = {
        "response_id": ident,
        "text": completion.text,
        "generation_id": stable_id("", ident),
        "chat_history": [],
        "finish_reason": _finish(completion),
    }
    if completion.tool_calls:
        body["tool_calls"] = [{"name": c.name, "parameters": c.arguments} for c in completion.tool_calls]
    meta: JsonObject = {"api_version": {"version": "1"}}
    if completion.usage is not None:
        meta.update(wire.encode_usage(completion.usage))
    body["meta"] = meta
    return body


def encode_response(completion: Completion, request: JsonObject | None = None) -> bytes:
    del request
    if completion.error is not None:
        return wire.encode_error(completion.error.kind, completion.error.message).body
    return dump_json(_body(completion))


def decode_response(body: bytes | Parsed) -> Completion:
    root = Node.parse(body, WHAT)
    root.obj()
    error = wire.body_error(root)
    return Completion(stop_reason=None, error=error) if error is not None else _read(root)


def _read(root: Node, message: str | None = None) -> Completion:
    """An answer object; `message` is the error a failed stream's end names."""
    root.obj()
    calls = tuple(call_v1(call) for call in root["tool_calls"].items())
    finish = root["finish_reason"].opt_string()
    error = None
    if finish in wire.ERROR_REASONS:
        error = ProviderError(ErrorKind.SERVER_ERROR, message or "")
    return Completion(
        id=root["response_id"].opt_string(),
        text=root["text"].opt_string() or "",
        tool_calls=calls,
        stop_reason=None if error else _stop(finish, bool(calls)),
        usage=wire.decode_usage(root["meta"]),
        error=error,
    )


def encode_stream(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    del request
    body = _body(completion)

    def line(event: str, **fields: Any) -> bytes:
        return encode_line({"is_finished": event == "stream-end", "event_type": event, **fields})

    lines = [line("stream-start", generation_id=body["generation_id"])]
    lines += [line("text-generation", text=piece) for piece in split_deltas(completion.text, delta_chars)]
    if completion.tool_calls:
        lines.append(line("tool-calls-generation", text=completion.text, tool_calls=body["tool_calls"]))
    failed = {"error": completion.error.message} if completion.error is not None else {}
    lines.append(line("stream-end", finish_reason=body["finish_reason"], **failed, response=body))
    return lines


def decode_stream(chunks: Iterable[bytes]) -> Completion:
    """The `stream-end` answer when it came; else what the pieces gave (a cut stream)."""
    decoder = NdjsonDecoder()
    text: list[str] = []
    calls: tuple[ToolCall, ...] = ()
    ident = None
    for chunk in chunks:
        for value in decoder.feed(chunk):
            event = Node(value, WHAT)
            match event["event_type"].opt_string():
                case "stream-start":
                    ident = event["generation_id"].opt_string()
                case "text-generation":
                    text.append(event["text"].opt_string() or "")
                case "tool-calls-generation":
                    calls = tuple(call_v1(call) for call in event["tool_calls"].items())
                case "stream-end":
                    return _read(event["response"], event["error"].opt_string())
                case _:
                    pass
    decoder.close()
    return Completion(id=ident, text="".join(text), tool_calls=calls, stop_reason=None)
