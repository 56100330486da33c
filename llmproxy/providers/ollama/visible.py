"""What of a Completion survives a trip through Ollama's native API (the `visible()` contract)."""

from llmproxy.model import Completion
from llmproxy.providers.ollama import errors, wire
from llmproxy.providers.ollama.answer import CHAT, GENERATE, Api


def visible(api: Api, completion: Completion) -> Completion:
    """Ollama has no answer id, no reasoning signature and no cache or reasoning counts; `created_at` holds
    whole seconds up to the year 9999; done reasons are only "stop" and "length"; tool calls (chat only)
    carry object arguments. A completion that ends in an error streams its content so far and then the error
    line, with no done reason and no counts; a stream that is only the error line names no model either."""
    c = completion
    calls = tuple(wire.visible_call(call) for call in c.tool_calls) if api.chat else ()
    identity = c.error is None or bool(c.reasoning or c.text or calls)
    return Completion(
        model=(c.model or None) if identity else None,
        created=wire.visible_created(c.created) if identity else None,
        text=c.text,
        tool_calls=calls,
        stop_reason=None if c.error else wire.visible_stop(c.stop_reason, tool_calls=bool(calls)),
        reasoning=c.reasoning or None,
        usage=None if c.error else wire.visible_usage(c.usage),
        error=None if c.error is None else errors.visible_error(c.error),
    )


def visible_chat(completion: Completion) -> Completion:
    return visible(CHAT, completion)


def visible_generate(completion: Completion) -> Completion:
    return visible(GENERATE, completion)
