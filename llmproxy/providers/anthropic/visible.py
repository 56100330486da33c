"""What an Anthropic Messages response can carry back of a Completion."""

from dataclasses import replace

from llmproxy.model import Completion
from llmproxy.providers.anthropic import errors, response
from llmproxy.providers.anthropic.wire import visible_call, visible_stop, visible_usage


def visible(completion: Completion) -> Completion:
    """What the wire carries back. Anthropic has no `created`; tool arguments go through JSON; reasoning
    tokens ride in `output_tokens_details.thinking_tokens`. A completion with an error is seen as its
    stream shows it: content so far, no stop reason, and only message_start's usage (1 output token).
    (A non-streaming body cannot carry content and an error: `encode_response` sends the error alone.)
    """
    c = completion
    usage = visible_usage(c.usage)
    stop_reason = visible_stop(c.stop_reason)
    error = None
    if c.error is not None:
        error = errors.visible_error(c.error)
        usage = replace(usage, output_tokens=1, reasoning_tokens=0)
        stop_reason = None
    return Completion(
        id=response.message_id(c),
        model=c.model or None,
        text=c.text,
        tool_calls=tuple(visible_call(call) for call in c.tool_calls),
        stop_reason=stop_reason,
        reasoning=c.reasoning or None,
        reasoning_signature=c.reasoning_signature or None,
        usage=usage,
        error=error,
    )
