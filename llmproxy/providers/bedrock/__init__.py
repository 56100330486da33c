"""AWS Bedrock Runtime (docs/providers.md#aws-bedrock): Converse and ConverseStream on any model, and InvokeModel
(with its response stream) on Anthropic models. Both stream in AWS event-stream framing."""

from llmproxy.framing.eventstream import MEDIA_TYPE
from llmproxy.model import Operation, Provider
from llmproxy.providers import prompt_caching
from llmproxy.providers.anthropic import request as anthropic_request
from llmproxy.providers.base import ChatCodec, assistant_messages
from llmproxy.providers.bedrock import errors, invoke, models, request, response, stream
from llmproxy.providers.bedrock.signing import SIGV4_HEADERS, VOLATILE_HEADERS
from llmproxy.providers.bedrock.visible import visible
from llmproxy.providers.facts import ProviderFacts

CONVERSE = ChatCodec(
    provider=Provider.BEDROCK,
    operation=Operation.CONVERSE,
    decode_request=request.decode_request,
    latest_message=request.latest_message,
    assistant_turns=assistant_messages,
    decode_response=response.decode_response,
    decode_stream=stream.decode_stream,
    encode_response=response.encode_response,
    encode_stream=stream.encode_stream,
    visible=visible,
    decode_error=errors.decode_error,
    encode_error=errors.encode_error,
    rate_limit_headers=errors.rate_limit_headers,
    stream_media_type=MEDIA_TYPE,
)

INVOKE_ANTHROPIC = ChatCodec(
    provider=Provider.BEDROCK,
    operation=Operation.INVOKE,
    decode_request=anthropic_request.decode_request,  # the Messages body; model and stream are in the URL
    latest_message=anthropic_request.latest_message,
    assistant_turns=assistant_messages,
    decode_response=invoke.decode_response,
    decode_stream=invoke.decode_stream,
    encode_response=invoke.encode_response,
    encode_stream=invoke.encode_stream,
    visible=invoke.visible,
    decode_error=errors.decode_error,
    encode_error=errors.encode_error,
    rate_limit_headers=errors.rate_limit_headers,
    stream_media_type=MEDIA_TYPE,
)


def invoke_codec(model_id: str | None) -> ChatCodec | None:
    """The codec for `POST /model/{model_id}/invoke[-with-response-stream]`, chosen by the model id."""
    return models.invoke_codec(model_id, INVOKE_ANTHROPIC)


FACTS = ProviderFacts(
    Provider.BEDROCK, history=(("messages",),), input_excludes_cache=True, prompt_caching=prompt_caching.claude
)

__all__ = ["CONVERSE", "FACTS", "INVOKE_ANTHROPIC", "SIGV4_HEADERS", "VOLATILE_HEADERS", "invoke_codec"]
