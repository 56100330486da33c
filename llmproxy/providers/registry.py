"""Finding the codec for a route. Codecs are registered here by name, so files and the CLI can name them."""

from llmproxy.model import Operation, Provider, Route
from llmproxy.providers import azure
from llmproxy.providers.anthropic import MESSAGES as ANTHROPIC_MESSAGES
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.ollama import CHAT as OLLAMA_CHAT
from llmproxy.providers.ollama import GENERATE as OLLAMA_GENERATE
from llmproxy.providers.bedrock import CONVERSE as BEDROCK_CONVERSE
from llmproxy.providers.bedrock import INVOKE_ANTHROPIC as BEDROCK_INVOKE_ANTHROPIC
from llmproxy.providers.bedrock import invoke_codec as bedrock_invoke_codec
from llmproxy.providers.gemini import GENERATE as GEMINI_GENERATE
from llmproxy.providers.gemini_code_assist import CODE_ASSIST as GEMINI_CODE_ASSIST
from llmproxy.providers.openai_chat import CHAT as OPENAI_CHAT
from llmproxy.providers.openai_responses import RESPONSES as OPENAI_RESPONSES

CHAT_CODECS: dict[str, ChatCodec] = {
    "anthropic-messages": ANTHROPIC_MESSAGES,
    "openai-chat": OPENAI_CHAT,
    "openai-responses": OPENAI_RESPONSES,
    "ollama-chat": OLLAMA_CHAT,
    "ollama-generate": OLLAMA_GENERATE,
    "bedrock-converse": BEDROCK_CONVERSE,
    "bedrock-invoke-anthropic": BEDROCK_INVOKE_ANTHROPIC,
    "gemini-generate": GEMINI_GENERATE,
    "gemini-code-assist": GEMINI_CODE_ASSIST,
}

_BY_ROUTE: dict[tuple[Provider, Operation], ChatCodec] = {
    (codec.provider, codec.operation): codec for codec in (*CHAT_CODECS.values(), azure.CHAT, azure.RESPONSES)
}
"""Azure's codecs are OpenAI's "openai-chat" and "openai-responses" with Azure's error bodies, so they have
no names of their own."""


def chat_codec(route: Route) -> ChatCodec | None:
    """The chat codec that reads and writes this route's bodies, if it is a chat operation."""
    if (route.provider, route.operation) == (Provider.BEDROCK, Operation.INVOKE):
        return bedrock_invoke_codec(route.model)  # an invoke body is the model family's own format
    return _BY_ROUTE.get((route.provider, route.operation))
