"""Anthropic Messages on Bedrock's InvokeModel (docs/providers.md#aws-bedrock), reusing the Anthropic codec.

The request is a Messages body without `model` and `stream` (the URL says both) plus `anthropic_version`;
the response body is a Messages body. The stream wraps each Anthropic event's JSON, base64-encoded, in an
event-stream `chunk` frame (`{"bytes": …}`); the last one, `message_stop`, gains Bedrock's invocation
metrics. A failure is an exception frame instead of Anthropic's `error` event.
"""

import base64
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Final

from llmproxy.model import Completion, ProviderError
from llmproxy.providers.anthropic import MESSAGES, response, stream
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, JsonObject, dump_json
from llmproxy.providers.bedrock.errors import (
    INVOKE_STREAM_EXCEPTIONS,
    error_body,
    failure_frame,
    is_error_body,
    read_error_body,
    read_failure,
    visible_error,
)
from llmproxy.providers.bedrock.wire import event_frame, messages
from llmproxy.providers.node import Node, Parsed

WHAT: Final = "bedrock invoke stream"


def decode_response(body: bytes | Parsed) -> Completion:
    root = Node.parse(body, response.WHAT)
    if is_error_body(root):
        return Completion(stop_reason=None, error=read_error_body(root, None))
    return response.decode_response(body)


def encode_response(completion: Completion, request: JsonObject | None = None) -> bytes:
    """The Messages body; a failed answer is Bedrock's error body alone (the status is `encode_error`'s)."""
    if completion.error is not None:
        return dump_json(error_body(completion.error.kind, completion.error.message))
    return response.encode_response(completion, request)


def decode_stream(chunks: Iterable[bytes]) -> Completion:
    """Everything that arrived, even from a cut stream; reading stops at an exception or error frame."""
    failures: list[ProviderError] = []
    completion = stream.read_events(_payloads(chunks, failures))
    return replace(completion, error=failures[0]) if failures else completion


def _payloads(chunks: Iterable[bytes], failures: list[ProviderError]) -> Iterator[Node]:
    for message in messages(chunks):
        error = read_failure(message, WHAT)
        if error is not None:
            failures.append(error)
            return
        if message.string(":event-type") != "chunk":
            continue
        data = Node.parse(message.payload, WHAT)["bytes"]
        try:
            raw = base64.b64decode(data.string(), validate=True)
        except ValueError as exc:  # binascii.Error, or a str that is not ASCII
            raise data.fail(f"base64 ({exc})") from None
        yield Node.parse(raw, stream.WHAT)


def encode_stream(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    frames: list[bytes] = []
    for event in stream.stream_events(completion, request, delta_chars=delta_chars):
        if event["type"] == "error" and completion.error is not None:
            frames.append(failure_frame(completion.error, INVOKE_STREAM_EXCEPTIONS))
            break
        if event["type"] == "message_stop":
            event = {**event, "amazon-bedrock-invocationMetrics": _metrics(completion)}
        frames.append(event_frame("chunk", {"bytes": base64.b64encode(dump_json(event)).decode()}))
    return frames


def _metrics(completion: Completion) -> JsonObject:
    usage = completion.usage
    return {
        "inputTokenCount": usage.input_tokens if usage else 0,
        "outputTokenCount": usage.output_tokens if usage else 0,
        "invocationLatency": 0,  # a Completion keeps no timings
        "firstByteLatency": 0,
    }


def visible(completion: Completion) -> Completion:
    """What Anthropic's wire carries back, with the failure as Bedrock's frame says it."""
    shown = MESSAGES.visible(completion)
    return shown if completion.error is None else replace(shown, error=visible_error(completion.error))
