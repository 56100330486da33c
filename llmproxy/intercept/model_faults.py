"""Model misbehaviour: answers that are well-formed on the wire and wrong as answers — what tests an agent's
own logic rather than its HTTP stack. Each is a `Completion` the requesting API's codec encodes, so the
client's SDK parses it as it would a real one; llmproxy answers it itself (the request is not forwarded).
"""

from typing import Final

from llmproxy.intercept.profile import ModelFault
from llmproxy.model import Completion, Conversation, StopReason, ToolCall, Usage
from llmproxy.providers.base import stable_id

UNKNOWN_TOOL: Final = "llmproxy_no_such_tool"
INVALID_ARGUMENTS: Final = '{"llmproxy": "these arguments are not valid JSON'

_TEXTS: Final = {
    ModelFault.REFUSAL: "I'm sorry, but I can't help with that request.",
    ModelFault.CONTENT_FILTER: "Here is the first part of the answer, before the provider's filter stopped",
    ModelFault.MAX_TOKENS: "This answer was cut off by the max_tokens limit in the middle of a",
}
_STOPS: Final = {
    ModelFault.EMPTY: StopReason.END_TURN,
    ModelFault.REFUSAL: StopReason.REFUSAL,
    ModelFault.CONTENT_FILTER: StopReason.CONTENT_FILTER,
    ModelFault.INVALID_TOOL_ARGUMENTS: StopReason.TOOL_USE,
    ModelFault.UNKNOWN_TOOL: StopReason.TOOL_USE,
    ModelFault.MAX_TOKENS: StopReason.MAX_TOKENS,
}


def misbehaving(fault: ModelFault, conversation: Conversation | None, model: str | None, number: int) -> Completion:
    """The wrong answer `fault` names, to the `number`th request a profile faulted (ids stay unique)."""
    offered = [tool.name for tool in conversation.tools] if conversation is not None else []
    calls: tuple[ToolCall, ...] = ()
    if fault is ModelFault.INVALID_TOOL_ARGUMENTS:
        name = offered[0] if offered else "llmproxy_tool"
        calls = (ToolCall(stable_id("call_", fault, number), name, {}, invalid_arguments=INVALID_ARGUMENTS),)
    elif fault is ModelFault.UNKNOWN_TOOL:
        name = UNKNOWN_TOOL
        while name in offered:
            name += "_"
        calls = (ToolCall(stable_id("call_", fault, number), name, {}),)
    text = _TEXTS.get(fault, "")
    output = max(1, len(text) // 4) if text or calls else 0
    return Completion(
        id=stable_id("msg_", fault, number),
        model=model,
        text=text,
        tool_calls=calls,
        stop_reason=_STOPS[fault],
        usage=Usage(input_tokens=0, output_tokens=output + 8 * len(calls), estimated=True),
    )
