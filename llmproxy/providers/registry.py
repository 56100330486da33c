"""Finding the codec for a route. Codecs are registered here by name, so files and the CLI can name them."""

from llmproxy.model import Operation, Provider, Route
from llmproxy.providers.anthropic import MESSAGES as ANTHROPIC_MESSAGES
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.gemini import GENERATE as GEMINI_GENERATE
from llmproxy.providers.gemini_code_assist import CODE_ASSIST as GEMINI_CODE_ASSIST
from llmproxy.providers.openai_chat import CHAT as OPENAI_CHAT
from llmproxy.providers.openai_responses import RESPONSES as OPENAI_RESPONSES

CHAT_CODECS: dict[str, ChatCodec] = {
    "anthropic-messages": ANTHROPIC_MESSAGES,
    "openai-chat": OPENAI_CHAT,
    "openai-responses": OPENAI_RESPONSES,
    "gemini-generate": GEMINI_GENERATE,
    "gemini-code-assist": GEMINI_CODE_ASSIST,
}

_BY_ROUTE: dict[tuple[Provider, Operation], ChatCodec] = {
    (codec.provider, codec.operation): codec for codec in CHAT_CODECS.values()
}


def chat_codec(route: Route) -> ChatCodec | None:
    """The chat codec that reads and writes this route's bodies, if it is a chat operation."""
    return _BY_ROUTE.get((route.provider, route.operation))
