"""What a Gemini response can carry back of a Completion."""

from dataclasses import replace

from llmproxy.model import Completion
from llmproxy.providers.gemini.errors import visible_error
from llmproxy.providers.gemini.response import part_groups
from llmproxy.providers.gemini.wire import finish_reason, response_id, stop_reason, visible_call, visible_usage


def visible(completion: Completion) -> Completion:
    """What the wire carries back. Gemini has no `created` and no cache-write count; tool arguments must
    be a JSON object; a turn that calls tools finishes with STOP, so the stop reason is read back from the
    parts. A completion with an error is seen as its stream shows it: content so far, then the error with
    no finish reason and no usage (the final chunk never came), and no identity if no content came first.
    (A non-streaming body cannot carry content and an error: `encode_response` sends the error alone.)
    """
    c = completion
    calls = tuple(visible_call(call) for call in c.tool_calls)
    shown = Completion(
        id=response_id(c),
        model=c.model or None,
        text=c.text,
        tool_calls=calls,
        stop_reason=None if c.stop_reason is None else stop_reason(finish_reason(c.stop_reason), bool(calls)),
        reasoning=c.reasoning or None,
        reasoning_signature=c.reasoning_signature or None,
        usage=None if c.usage is None else visible_usage(c.usage),
    )
    if c.error is None:
        return shown
    shown = replace(shown, stop_reason=None, usage=None, error=visible_error(c.error))
    return shown if part_groups(c) else replace(shown, id=None, model=None)
