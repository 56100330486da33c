"""OpenAI Responses (`POST /v1/responses`), also spoken by Codex CLI to `chatgpt.com/backend-api/codex`.

`RESPONSES` is the codec; each direction lives in its own module. Errors and rate-limit headers are
OpenAI's, shared with Chat Completions.
"""

from llmproxy.model import Operation, Provider
from llmproxy.providers import openai_errors, prompt_caching
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.facts import ProviderFacts
from llmproxy.providers.openai_chat import OPENAI_VOLATILE
from llmproxy.providers.openai_responses.encode import encode_response, visible
from llmproxy.providers.openai_responses.reassemble import decode_stream
from llmproxy.providers.openai_responses.request import asks_nothing, assistant_turns, decode_request
from llmproxy.providers.openai_responses.response import decode_response, read_answer
from llmproxy.providers.openai_responses.stream import encode_stream

RESPONSES = ChatCodec(
    provider=Provider.OPENAI,
    operation=Operation.RESPONSES,
    decode_request=decode_request,
    assistant_turns=assistant_turns,
    decode_response=decode_response,
    read_answer=read_answer,
    decode_stream=decode_stream,
    encode_response=encode_response,
    encode_stream=encode_stream,
    visible=visible,
    decode_error=openai_errors.decode_error,
    encode_error=openai_errors.encode_error,
    rate_limit_headers=openai_errors.rate_limit_headers,
    asks_nothing=asks_nothing,
)

FACTS = ProviderFacts(
    Provider.OPENAI, volatile=OPENAI_VOLATILE, history=(("input",),), prompt_caching=prompt_caching.openai
)

__all__ = ["FACTS", "RESPONSES"]
