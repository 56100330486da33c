"""OpenAI Chat Completions (`POST /v1/chat/completions`): the `CHAT` codec.

Errors and rate-limit headers are OpenAI-wide and live in `openai_errors`; this package owns the chat
request, the `chat.completion` body, the chunk stream, and what of a Completion they can express.
"""

from collections.abc import Iterable
from datetime import datetime

from llmproxy.model import Completion, Conversation, ErrorKind, Operation, Provider, ProviderError
from llmproxy.providers import openai_errors
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, ChatCodec, ErrorReply, JsonObject, RateLimits
from llmproxy.providers.openai_chat import request, response, stream
from llmproxy.providers.openai_chat.visible import visible as _visible


class OpenAIChatCodec:
    provider = Provider.OPENAI
    operation = Operation.CHAT_COMPLETIONS
    stream_media_type = "text/event-stream"

    def decode_request(self, body: bytes) -> Conversation:
        return request.decode_request(body)

    def decode_response(self, body: bytes) -> Completion:
        return response.decode_response(body)

    def decode_stream(self, chunks: Iterable[bytes]) -> Completion:
        return stream.decode_stream(chunks)

    def encode_response(self, completion: Completion, request: JsonObject | None = None) -> bytes:
        return response.encode_response(completion, request)

    def encode_stream(
        self,
        completion: Completion,
        request: JsonObject | None = None,
        *,
        delta_chars: int = DEFAULT_DELTA_CHARS,
    ) -> list[bytes]:
        return stream.encode_stream(completion, request, delta_chars=delta_chars)

    def visible(self, completion: Completion) -> Completion:
        return _visible(completion)

    def decode_error(self, status: int, body: bytes) -> ProviderError:
        return openai_errors.decode_error(status, body)

    def encode_error(self, kind: ErrorKind, message: str, *, retry_after: float | None = None) -> ErrorReply:
        return openai_errors.encode_error(kind, message, retry_after=retry_after)

    def rate_limit_headers(self, limits: RateLimits, now: datetime) -> dict[str, str]:
        return openai_errors.rate_limit_headers(limits, now)


CHAT: ChatCodec = OpenAIChatCodec()

__all__ = ["CHAT", "OpenAIChatCodec"]
