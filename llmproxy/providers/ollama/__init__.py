"""Ollama's native API (docs/providers.md#ollama): `POST /api/chat` and `POST /api/generate`, streamed as NDJSON.

Ollama's OpenAI-compatible `/v1/…` endpoints are served by the OpenAI codecs.
"""

from llmproxy.framing import ndjson
from llmproxy.model import Operation, Provider
from llmproxy.providers.base import ChatCodec, assistant_messages
from llmproxy.providers.facts import ProviderFacts
from llmproxy.providers.ollama import errors, request, response, stream
from llmproxy.providers.ollama.visible import visible_chat, visible_generate

CHAT = ChatCodec(
    provider=Provider.OLLAMA,
    operation=Operation.CHAT,
    decode_request=request.decode_chat_request,
    latest_message=request.latest_message,
    assistant_turns=assistant_messages,
    decode_response=response.decode_chat,
    decode_stream=stream.decode_chat,
    encode_response=response.encode_chat,
    encode_stream=stream.encode_chat,
    visible=visible_chat,
    decode_error=errors.decode_error,
    encode_error=errors.encode_error,
    rate_limit_headers=errors.rate_limit_headers,
    stream_media_type=ndjson.MEDIA_TYPE,
)

GENERATE = ChatCodec(
    provider=Provider.OLLAMA,
    operation=Operation.GENERATE,
    decode_request=request.decode_generate_request,
    assistant_turns=request.generate_turns,
    decode_response=response.decode_generate,
    decode_stream=stream.decode_generate,
    encode_response=response.encode_generate,
    encode_stream=stream.encode_generate,
    visible=visible_generate,
    decode_error=errors.decode_error,
    encode_error=errors.encode_error,
    rate_limit_headers=errors.rate_limit_headers,
    stream_media_type=ndjson.MEDIA_TYPE,
)

FACTS = ProviderFacts(Provider.OLLAMA, history=(("messages",),))

__all__ = ["CHAT", "FACTS", "GENERATE"]
