"""The object Ollama answers with, for /api/chat and /api/generate alike.

A non-streaming body and every NDJSON line of a stream are the same object: `model`, `created_at`, the
content (chat: `message.content`, `message.thinking`, `message.tool_calls`; generate: `response`,
`thinking`), `done`, and on the final object `done_reason` with counts and durations. So one builder
writes both, and one `Reader` reads a body (one object) or a stream (the objects in order).
"""

from dataclasses import dataclass, field
from typing import Final

from llmproxy.model import Completion, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.base import JsonObject
from llmproxy.providers.node import Node
from llmproxy.providers.ollama import errors, wire


@dataclass(frozen=True, slots=True)
class Api:
    """Which of the two endpoints: `chat` objects nest content in `message` and may carry tool calls."""

    chat: bool
    what: str


CHAT: Final = Api(chat=True, what="ollama chat")
GENERATE: Final = Api(chat=False, what="ollama generate")


def head(completion: Completion, request: JsonObject | None) -> JsonObject:
    """The fields every object of one answer repeats."""
    return {"model": wire.model_name(completion, request), "created_at": wire.encode_created(completion.created)}


def content(
    api: Api, head: JsonObject, text: str = "", thinking: str = "", tool_calls: tuple[ToolCall, ...] = ()
) -> JsonObject:
    """An object that is not the last (`done: false`). Empty thinking and tool calls are left out, as Ollama does."""
    if api.chat:
        message: JsonObject = {"role": "assistant", "content": text}
        if thinking:
            message["thinking"] = thinking
        if tool_calls:
            message["tool_calls"] = [wire.encode_tool_call(call) for call in tool_calls]
        return {**head, "message": message, "done": False}
    body: JsonObject = {**head, "response": text}
    if thinking:
        body["thinking"] = thinking
    return {**body, "done": False}


def final(
    api: Api,
    head: JsonObject,
    completion: Completion,
    text: str = "",
    thinking: str = "",
    tool_calls: tuple[ToolCall, ...] = (),
) -> JsonObject:
    """The last object: `done: true`, the done reason (left out when unknown) and the counts."""
    body = content(api, head, text, thinking, tool_calls)
    body["done"] = True
    if completion.stop_reason is not None:
        body["done_reason"] = wire.encode_stop(completion.stop_reason)
    return {**body, **wire.encode_metrics(completion.usage)}


@dataclass(slots=True)
class Reader:
    """Objects in, one Completion out. Content accumulates; the `done` object settles stop and usage."""

    api: Api
    model: str | None = None
    created: int | None = None
    started: bool = False
    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    done_reason: str | None = None
    usage: Usage | None = None
    error: ProviderError | None = None

    def read(self, node: Node) -> None:
        node.obj()
        if node["error"].present:
            self.error = errors.read_error(node, None)
            return
        if not self.started:
            self.started = True
            self.model = node["model"].opt_string() or None
            self.created = wire.decode_created(node["created_at"])
        if self.api.chat:
            message = node["message"]
            self.text.append(message["content"].opt_string() or "")
            self.thinking.append(message["thinking"].opt_string() or "")
            self.tool_calls.extend(wire.decode_tool_call(call) for call in message["tool_calls"].items())
        else:
            self.text.append(node["response"].opt_string() or "")
            self.thinking.append(node["thinking"].opt_string() or "")
        if node["done"].boolean():
            self.done_reason = node["done_reason"].opt_string()
            self.usage = wire.decode_usage(node)

    def completion(self) -> Completion:
        stop: StopReason | None = wire.decode_stop(self.done_reason, tool_calls=bool(self.tool_calls))
        return Completion(
            model=self.model,
            created=self.created,
            text="".join(self.text),
            tool_calls=tuple(self.tool_calls),
            stop_reason=stop,
            reasoning="".join(self.thinking) or None,
            usage=self.usage,
            error=self.error,
        )
