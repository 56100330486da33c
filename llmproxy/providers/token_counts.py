"""The count-token endpoints of every provider, read and answered: Anthropic `/v1/messages/count_tokens`,
OpenAI `/v1/responses/input_tokens`, Gemini and Code Assist `:countTokens`, Bedrock `CountTokens`.

Each request holds the conversation it would send (a Messages or Responses body, Gemini `contents` or a
`generateContentRequest`, a Converse request or an InvokeModel body under Bedrock's `input`); the answer is
one number in the provider's own field. Not chat exchanges, so a table of small functions, not codecs. Each
imports its provider's codecs when first called: the table is imported by every request's route, the codecs
are needed only by a count-token request.
"""

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass

from llmproxy.model import Conversation, Operation, Provider, Route
from llmproxy.providers.base import dump_json
from llmproxy.providers.node import Node


@dataclass(frozen=True, slots=True)
class TokenCounter:
    """How one provider's count-token endpoint reads its request and says its count."""

    read: Callable[[bytes, Route], Conversation]
    answer: Callable[[int], bytes]


def token_counter(route: Route | None) -> TokenCounter | None:
    """The counter of a count-token route, None for any other route."""
    if route is None or route.operation is not Operation.COUNT_TOKENS or route.websocket:
        return None
    return _COUNTERS.get(route.provider)


def _bedrock_request(body: bytes, route: Route) -> Conversation:
    """`{"input": {"converse": {…}}}`, or `{"input": {"invokeModel": {"body": base64}}}` in the model's own
    format (the blob is base64 in JSON, as botocore sends it)."""
    from llmproxy.providers.bedrock import CONVERSE, invoke_codec

    root = Node.parse(body, "bedrock count tokens")
    root.obj()
    given = root["input"]
    given.obj()
    if given["converse"].present:
        return CONVERSE.decode_request(dump_json(given["converse"].obj()))
    blob = given["invokeModel"]["body"]
    try:
        inner = base64.b64decode(blob.string(), validate=True)
    except (binascii.Error, ValueError):
        raise blob.fail("an InvokeModel body in base64") from None
    codec = invoke_codec(route.model)
    if codec is None:
        raise blob.fail(f"a body llmproxy can read for {route.model or 'this model'}")
    return codec.decode_request(inner)


def _field(name: str, **beside: str) -> Callable[[int], bytes]:
    return lambda count: dump_json({**beside, name: count})


def _anthropic_request(body: bytes, route: Route) -> Conversation:
    from llmproxy.providers.anthropic import MESSAGES

    return MESSAGES.decode_request(body)


def _openai_request(body: bytes, route: Route) -> Conversation:
    from llmproxy.providers.openai_responses import RESPONSES

    return RESPONSES.decode_request(body)


def _gemini_request(body: bytes, route: Route) -> Conversation:
    from llmproxy.providers import gemini

    return gemini.decode_count_tokens_request(body)


def _gemini_answer(count: int) -> bytes:
    from llmproxy.providers import gemini

    return gemini.encode_count_tokens_response(count)


def _code_assist_request(body: bytes, route: Route) -> Conversation:
    from llmproxy.providers import gemini_code_assist

    return gemini_code_assist.decode_count_tokens_request(body)


_COUNTERS: dict[Provider, TokenCounter] = {
    Provider.ANTHROPIC: TokenCounter(_anthropic_request, _field("input_tokens")),
    Provider.OPENAI: TokenCounter(_openai_request, _field("input_tokens", object="response.input_tokens")),
    Provider.GEMINI: TokenCounter(_gemini_request, _gemini_answer),
    Provider.GEMINI_CODE_ASSIST: TokenCounter(_code_assist_request, _field("totalTokens")),
    Provider.BEDROCK: TokenCounter(_bedrock_request, _field("inputTokens")),
}
