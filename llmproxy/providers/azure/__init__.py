"""Azure OpenAI (docs/providers.md#azure-openai): OpenAI's Chat Completions and Responses formats on Azure's paths.

The bodies and streams are OpenAI's, so the codecs are OpenAI's with Azure's error encoding swapped in
(`errors`); decoding, rate-limit headers and everything else are shared, not copied.
"""

from dataclasses import replace

from llmproxy.model import Provider
from llmproxy.providers import openai_chat, openai_responses
from llmproxy.providers.azure import errors
from llmproxy.providers.openai_chat import CHAT as OPENAI_CHAT
from llmproxy.providers.openai_responses import RESPONSES as OPENAI_RESPONSES

CHAT = replace(OPENAI_CHAT, provider=Provider.AZURE, encode_error=errors.encode_error)
RESPONSES = replace(OPENAI_RESPONSES, provider=Provider.AZURE, encode_error=errors.encode_error)

FACTS = replace(openai_chat.FACTS.merged(openai_responses.FACTS), provider=Provider.AZURE)

__all__ = ["CHAT", "FACTS", "RESPONSES"]
