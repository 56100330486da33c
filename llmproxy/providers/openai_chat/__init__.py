"""OpenAI Chat Completions (`POST /v1/chat/completions`): the `CHAT` codec.

Errors and rate-limit headers are OpenAI-wide and live in `openai_errors`; this package owns the chat
request, the `chat.completion` body, the chunk stream, and what of a Completion they can express.
"""

from llmproxy.model import Operation, Provider
from llmproxy.providers import openai_errors, prompt_caching
from llmproxy.providers.base import ChatCodec, assistant_messages
from llmproxy.providers.facts import ProviderFacts
from llmproxy.providers.openai_chat import request, response, stream
from llmproxy.providers.openai_chat.visible import visible

CHAT = ChatCodec(
    provider=Provider.OPENAI,
    operation=Operation.CHAT_COMPLETIONS,
    decode_request=request.decode_request,
    latest_message=request.latest_message,
    assistant_turns=assistant_messages,
    decode_response=response.decode_response,
    read_answer=response.read_answer,
    read_usage=response.read_usage,
    decode_stream=stream.decode_stream,
    encode_response=response.encode_response,
    encode_stream=stream.encode_stream,
    visible=visible,
    decode_error=openai_errors.decode_error,
    encode_error=openai_errors.encode_error,
    rate_limit_headers=openai_errors.rate_limit_headers,
)

OPENAI_VOLATILE = ("$.user", "$.prompt_cache_key", "$.safety_identifier")  # OpenAI-wide: Responses too
FACTS = ProviderFacts(
    Provider.OPENAI, volatile=OPENAI_VOLATILE, history=(("messages",),), prompt_caching=prompt_caching.openai
)

__all__ = ["CHAT", "FACTS"]
