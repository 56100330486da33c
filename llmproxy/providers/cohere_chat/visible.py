"""What of a Completion survives Cohere's chat wire (the `visible()` contract)."""

from llmproxy.model import Completion, ErrorKind, ProviderError, ToolCall
from llmproxy.providers.anthropic.wire import visible_call
from llmproxy.providers.cohere_chat import response, v1, wire


def _error(completion: Completion) -> ProviderError | None:
    """A failed stream carries the message only: Cohere names no kind in it."""
    error = completion.error
    return None if error is None else ProviderError(ErrorKind.SERVER_ERROR, error.message)


def visible(completion: Completion) -> Completion:
    """v2: an id (made from the content when absent), text, reasoning (no signature), tool calls through
    JSON, Cohere's finish reasons, billed input and output counts. No model, no created time. A failed
    answer streams its content, then the error: no finish reason, no usage."""
    c = completion
    return Completion(
        id=response.answer_id(c),
        text=c.text,
        tool_calls=tuple(visible_call(call) for call in c.tool_calls),
        stop_reason=None if c.error else wire.visible_stop(c.stop_reason),
        reasoning=c.reasoning or None,
        usage=None if c.error else wire.visible_usage(c.usage),
        error=_error(c),
    )


def visible_v1(completion: Completion) -> Completion:
    """v1: no reasoning and no tool-call ids either; arguments travel as an object (text that is not one
    cannot). A failed answer keeps its usage: `stream-end` carries the whole answer."""
    c = completion
    return Completion(
        id=v1.answer_id(c),
        text=c.text,
        tool_calls=tuple(ToolCall("", call.name, call.arguments) for call in c.tool_calls),
        stop_reason=v1.visible_stop(c),
        usage=wire.visible_usage(c.usage),
        error=_error(c),
    )
