"""The count-token endpoints of every provider, read and answered: Anthropic `/v1/messages/count_tokens`,
OpenAI `/v1/responses/input_tokens`, Gemini and Code Assist `:countTokens`, Bedrock `CountTokens`.

Each request holds the conversation it would send (a Messages or Responses body, Gemini `contents` or a
`generateContentRequest`, a Converse request or an InvokeModel body under Bedrock's `input`); the answer is
one number in the provider's own field. Not chat exchanges, so a table of small functions, not codecs.
"""

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass

from llmproxy.model import Conversation, Operation, Provider, Route
from llmproxy.providers import gemini, gemini_code_assist
from llmproxy.providers.anthropic import MESSAGES
from llmproxy.providers.base import dump_json
from llmproxy.providers.bedrock import CONVERSE, invoke_codec
from llmproxy.providers.node import Node
from llmproxy.providers.openai_responses import RESPONSES


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


_COUNTERS: dict[Provider, TokenCounter] = {
    Provider.ANTHROPIC: TokenCounter(lambda body, _: MESSAGES.decode_request(body), _field("input_tokens")),
    Provider.OPENAI: TokenCounter(
        lambda body, _: RESPONSES.decode_request(body), _field("input_tokens", object="response.input_tokens")
    ),
    Provider.GEMINI: TokenCounter(
        lambda body, _: gemini.decode_count_tokens_request(body), gemini.encode_count_tokens_response
    ),
    Provider.GEMINI_CODE_ASSIST: TokenCounter(
        lambda body, _: gemini_code_assist.decode_count_tokens_request(body), _field("totalTokens")
    ),
    Provider.BEDROCK: TokenCounter(_bedrock_request, _field("inputTokens")),
}
