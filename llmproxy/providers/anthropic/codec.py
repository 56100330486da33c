"""The Anthropic Messages codec: `POST /v1/messages` (and `?beta=true`, which has the same body)."""

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime

from llmproxy.model import Completion, Conversation, ErrorKind, Operation, Provider, ProviderError
from llmproxy.providers.anthropic import errors, request, response, stream
from llmproxy.providers.anthropic.wire import visible_call, visible_stop, visible_usage
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, ErrorReply, JsonObject, RateLimits


class MessagesCodec:
    """Satisfies `ChatCodec`; the wire logic lives in one module per concept."""

    provider = Provider.ANTHROPIC
    operation = Operation.MESSAGES
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
        """What the wire carries back. Anthropic has no `created`; tool arguments go through JSON; reasoning
        tokens ride in `output_tokens_details.thinking_tokens`. A completion with an error is seen as its
        stream shows it: content so far, no stop reason, and only message_start's usage (1 output token).
        (A non-streaming body cannot carry content and an error: `encode_response` sends the error alone.)
        """
        c = completion
        usage = visible_usage(c.usage)
        stop_reason = visible_stop(c.stop_reason)
        error = None
        if c.error is not None:
            error = errors.visible_error(c.error)
            usage = replace(usage, output_tokens=1, reasoning_tokens=0)
            stop_reason = None
        return Completion(
            id=response.message_id(c),
            model=c.model or None,
            text=c.text,
            tool_calls=tuple(visible_call(call) for call in c.tool_calls),
            stop_reason=stop_reason,
            reasoning=c.reasoning or None,
            reasoning_signature=c.reasoning_signature or None,
            usage=usage,
            error=error,
        )

    def decode_error(self, status: int, body: bytes) -> ProviderError:
        return errors.decode_error(status, body)

    def encode_error(self, kind: ErrorKind, message: str, *, retry_after: float | None = None) -> ErrorReply:
        return errors.encode_error(kind, message, retry_after=retry_after)

    def rate_limit_headers(self, limits: RateLimits, now: datetime) -> dict[str, str]:
        return errors.rate_limit_headers(limits, now)
