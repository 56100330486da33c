"""OpenAI Responses (`POST /v1/responses`), also spoken by Codex CLI to `chatgpt.com/backend-api/codex`.

`RESPONSES` is the codec (see `ChatCodec`); each direction lives in its own module.
"""

from collections.abc import Iterable
from datetime import datetime

from llmproxy.model import Completion, Conversation, ErrorKind, Operation, Provider, ProviderError
from llmproxy.providers import openai_errors
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, ChatCodec, ErrorReply, JsonObject, RateLimits
from llmproxy.providers.openai_responses.encode import encode_response, visible
from llmproxy.providers.openai_responses.reassemble import decode_stream
from llmproxy.providers.openai_responses.request import decode_request
from llmproxy.providers.openai_responses.response import decode_response
from llmproxy.providers.openai_responses.stream import encode_stream


class ResponsesCodec:
    """The Responses wire format. Errors and rate-limit headers are OpenAI's, shared with Chat."""

    provider = Provider.OPENAI
    operation = Operation.RESPONSES
    stream_media_type = "text/event-stream"

    def decode_request(self, body: bytes) -> Conversation:
        return decode_request(body)

    def decode_response(self, body: bytes) -> Completion:
        return decode_response(body)

    def decode_stream(self, chunks: Iterable[bytes]) -> Completion:
        return decode_stream(chunks)

    def encode_response(self, completion: Completion, request: JsonObject | None = None) -> bytes:
        return encode_response(completion, request)

    def encode_stream(
        self,
        completion: Completion,
        request: JsonObject | None = None,
        *,
        delta_chars: int = DEFAULT_DELTA_CHARS,
    ) -> list[bytes]:
        return encode_stream(completion, request, delta_chars=delta_chars)

    def visible(self, completion: Completion) -> Completion:
        return visible(completion)

    def decode_error(self, status: int, body: bytes) -> ProviderError:
        return openai_errors.decode_error(status, body)

    def encode_error(self, kind: ErrorKind, message: str, *, retry_after: float | None = None) -> ErrorReply:
        return openai_errors.encode_error(kind, message, retry_after=retry_after)

    def rate_limit_headers(self, limits: RateLimits, now: datetime) -> dict[str, str]:
        return openai_errors.rate_limit_headers(limits, now)


RESPONSES: ChatCodec = ResponsesCodec()

__all__ = ["RESPONSES", "ResponsesCodec"]
