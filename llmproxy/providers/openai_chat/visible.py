"""What of a Completion survives a trip through Chat Completions (the `visible()` contract)."""

from dataclasses import replace

import orjson

from llmproxy.model import Completion, StopReason, ToolCall
from llmproxy.providers.base import dump_arguments, parse_arguments
from llmproxy.providers.openai_chat.mapping import (
    WHAT_STREAM,
    decode_stream_error,
    encode_stream_error,
    finish_reason,
    header,
    stop_reason,
)


def visible(completion: Completion) -> Completion:
    """Chat Completions carries no reasoning, no cache-control and no `estimated` flag; it states ids,
    created and finish reasons in its own terms (see `mapping`); argument text is re-read as the client
    will read it. A completion that ends in an error has no finish reason and no usage: the error chunk
    replaces both."""
    ident, created, _ = header(completion, None)
    error = completion.error
    usage = completion.usage
    stop = completion.stop_reason
    if error is not None:
        error = decode_stream_error(orjson.loads(encode_stream_error(error)), WHAT_STREAM)
        usage = stop = None
    return replace(
        completion,
        id=ident,
        model=completion.model or None,
        created=created,
        tool_calls=tuple(_visible_call(call) for call in completion.tool_calls),
        stop_reason=None if stop is None else stop_reason(finish_reason(stop), refused=stop is StopReason.REFUSAL),
        reasoning=None,
        reasoning_signature=None,
        usage=None if usage is None else replace(usage, estimated=False),
        error=error,
    )


def _visible_call(call: ToolCall) -> ToolCall:
    arguments, invalid = parse_arguments(dump_arguments(call))
    return ToolCall(call.id, call.name, arguments, invalid)
