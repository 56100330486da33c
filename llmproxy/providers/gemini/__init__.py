"""Gemini (Generative Language API and Vertex AI, docs/providers.md#gemini): `models/{m}:generateContent` and
`:streamGenerateContent`, plus the `:countTokens` functions. The Code Assist back end the Gemini CLI uses
wraps these same bodies (`llmproxy.providers.gemini_code_assist`)."""

from llmproxy.model import Operation, Provider
from llmproxy.providers import prompt_caching
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.facts import ProviderFacts
from llmproxy.providers.gemini import errors, request, response, stream
from llmproxy.providers.gemini.count_tokens import (
    decode_count_tokens_request,
    decode_count_tokens_response,
    encode_count_tokens_response,
)
from llmproxy.providers.gemini.visible import visible

GENERATE = ChatCodec(
    provider=Provider.GEMINI,
    operation=Operation.GENERATE_CONTENT,
    decode_request=request.decode_request,
    latest_message=request.latest_message,
    assistant_turns=request.assistant_turns,
    decode_response=response.decode_response,
    read_answer=response.read_answer,
    decode_stream=stream.decode_stream,
    encode_response=response.encode_response,
    encode_stream=stream.encode_stream,
    visible=visible,
    decode_error=errors.decode_error,
    encode_error=errors.encode_error,
    rate_limit_headers=errors.rate_limit_headers,
)

FACTS = ProviderFacts(Provider.GEMINI, history=(("contents",),), prompt_caching=prompt_caching.gemini)

__all__ = [
    "FACTS",
    "GENERATE",
    "decode_count_tokens_request",
    "decode_count_tokens_response",
    "encode_count_tokens_response",
]
