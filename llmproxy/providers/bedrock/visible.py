"""What a Converse response can carry back of a Completion."""

from llmproxy.model import Completion
from llmproxy.providers.anthropic.wire import visible_call
from llmproxy.providers.bedrock.errors import visible_error
from llmproxy.providers.bedrock.wire import converse_usage, visible_stop


def visible(completion: Completion) -> Completion:
    """Converse names no id, model or creation time, and reports no reasoning tokens; tool arguments go
    through JSON. A failed completion is seen as its stream shows it: the content so far and the error, with
    no stop reason and no usage (both come after the point of failure). (A body cannot carry content and an
    error: `encode_response` sends Bedrock's error body alone.)"""
    c = completion
    failed = c.error is not None
    return Completion(
        text=c.text,
        tool_calls=tuple(visible_call(call) for call in c.tool_calls),
        stop_reason=None if failed else visible_stop(c.stop_reason),
        reasoning=c.reasoning or None,
        reasoning_signature=c.reasoning_signature or None,
        usage=None if failed else converse_usage(c.usage),
        error=None if c.error is None else visible_error(c.error),
    )
