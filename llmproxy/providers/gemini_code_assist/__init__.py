"""Gemini CLI's Code Assist back end (`cloudcode-pa.googleapis.com/v1internal:generateContent`,
`:streamGenerateContent`, `:countTokens`; docs/providers.md#gemini-cli-code-assist): Gemini bodies in Code Assist
envelopes."""

from llmproxy.model import Operation, Provider
from llmproxy.providers import prompt_caching
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.facts import ProviderFacts
from llmproxy.providers.gemini import errors
from llmproxy.providers.gemini.visible import visible
from llmproxy.providers.gemini_code_assist import envelope
from llmproxy.providers.gemini_code_assist.envelope import decode_count_tokens_request

CODE_ASSIST = ChatCodec(
    provider=Provider.GEMINI_CODE_ASSIST,
    operation=Operation.GENERATE_CONTENT,
    decode_request=envelope.decode_request,
    assistant_turns=envelope.assistant_turns,
    decode_response=envelope.decode_response,
    read_answer=envelope.read_answer,
    decode_stream=envelope.decode_stream,
    encode_response=envelope.encode_response,
    encode_stream=envelope.encode_stream,
    visible=visible,
    decode_error=errors.decode_error,
    encode_error=errors.encode_error,
    rate_limit_headers=errors.rate_limit_headers,
)

FACTS = ProviderFacts(
    Provider.GEMINI_CODE_ASSIST,
    volatile=("$.user_prompt_id", "$.request.session_id"),
    history=(("request", "contents"),),
    prompt_caching=prompt_caching.gemini,
)

__all__ = ["CODE_ASSIST", "FACTS", "decode_count_tokens_request"]
