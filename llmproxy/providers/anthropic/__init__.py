"""Anthropic Messages (docs/providers.md#anthropic-messages): `POST /v1/messages` (and `?beta=true`, which has the same
body)."""

from llmproxy.model import Operation, Provider
from llmproxy.providers import prompt_caching
from llmproxy.providers.anthropic import errors, request, response, stream
from llmproxy.providers.anthropic.visible import visible
from llmproxy.providers.base import ChatCodec, assistant_messages
from llmproxy.providers.facts import ProviderFacts

MESSAGES = ChatCodec(
    provider=Provider.ANTHROPIC,
    operation=Operation.MESSAGES,
    decode_request=request.decode_request,
    latest_message=request.latest_message,
    assistant_turns=assistant_messages,
    decode_response=response.decode_response,
    read_answer=response.read_answer,
    decode_stream=stream.decode_stream,
    read_stream=stream.read_payloads,
    encode_response=response.encode_response,
    encode_stream=stream.encode_stream,
    visible=visible,
    decode_error=errors.decode_error,
    encode_error=errors.encode_error,
    rate_limit_headers=errors.rate_limit_headers,
)

FACTS = ProviderFacts(
    Provider.ANTHROPIC,
    volatile=("$.metadata.user_id",),
    history=(("messages",),),
    input_excludes_cache=True,
    prompt_caching=prompt_caching.claude,
)

__all__ = ["FACTS", "MESSAGES"]
