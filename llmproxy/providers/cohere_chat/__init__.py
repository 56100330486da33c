"""Cohere chat: v2 (`POST /v2/chat`, typed SSE events) and v1 (`POST /v1/chat`, NDJSON), which the
official SDK's `ClientV2.chat`/`chat_stream` and `Client.chat`/`chat_stream` send. Errors are Cohere's
`{"message": …}` bodies, the kind in the status; rate limits are counted in calls."""

from llmproxy.model import Operation, Provider
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.cohere_chat import request, response, stream, v1, wire
from llmproxy.providers.cohere_chat.visible import visible, visible_v1
from llmproxy.providers.facts import ProviderFacts

CHAT = ChatCodec(
    provider=Provider.COHERE,
    operation=Operation.CHAT,
    decode_request=request.decode_request,
    latest_message=request.latest_message,
    assistant_turns=request.assistant_turns,
    decode_response=response.decode_response,
    decode_stream=stream.decode_stream,
    encode_response=response.encode_response,
    encode_stream=stream.encode_stream,
    visible=visible,
    decode_error=wire.decode_error,
    encode_error=wire.encode_error,
    rate_limit_headers=wire.rate_limit_headers,
)

CHAT_V1 = ChatCodec(
    provider=Provider.COHERE,
    operation=Operation.CHAT,
    decode_request=request.decode_request_v1,
    assistant_turns=request.assistant_turns_v1,
    decode_response=v1.decode_response,
    decode_stream=v1.decode_stream,
    encode_response=v1.encode_response,
    encode_stream=v1.encode_stream,
    visible=visible_v1,
    decode_error=wire.decode_error,
    encode_error=wire.encode_error,
    rate_limit_headers=wire.rate_limit_headers,
    stream_media_type=v1.MEDIA_TYPE,
)

FACTS = ProviderFacts(Provider.COHERE, history=(("messages",),))

__all__ = ["CHAT", "CHAT_V1", "FACTS"]
