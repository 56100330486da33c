"""The official `anthropic` SDK parses exactly what llmproxy's Anthropic Messages codec serves.

Each Completion is encoded by llmproxy, served from a loopback server, read by the SDK, converted back
into a Completion by `sdk_completion` (written from the SDK's types, not from the codec) and compared
with `MESSAGES.visible(case)`.
"""

import json
from collections.abc import Iterator, Mapping

import anthropic
import pytest
from anthropic.types import Message

from llmproxy.framing.sse import decode_all
from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.anthropic import MESSAGES
from tests.conformance.server import LoopbackServer, Reply
from tests.golden.cases import CASES

pytestmark = pytest.mark.conformance

# Anthropic-only shapes on top of the shared golden cases.
EXTRA: dict[str, Completion] = {
    "redacted_thinking": Completion(
        id="msg_redacted",
        model="claude-x",
        text="Done.",
        reasoning_signature="RURBQ1RFRA==",
        stop_reason=StopReason.PAUSE_TURN,
        usage=Usage(input_tokens=900, output_tokens=40, cache_read_tokens=800, reasoning_tokens=12),
    ),
    "context_window": Completion(
        model="claude-x",
        text="Out of room",
        tool_calls=(ToolCall("toolu_a", "noop", {}), ToolCall("toolu_b", "nested", {"a": {"b": [None, True]}})),
        stop_reason=StopReason.CONTEXT_WINDOW_EXCEEDED,
        usage=None,
    ),
}
ALL = {**CASES, **EXTRA}
ARGS = {"model": "claude-x", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
SSE = {"content-type": "text/event-stream"}
JSON = {"content-type": "application/json"}


@pytest.fixture
def client(loopback: LoopbackServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(api_key="test-key", base_url=loopback.url, max_retries=0) as sdk:
        yield sdk


def sdk_completion(message: Message, tool_json: Mapping[int, str] | None = None) -> Completion:
    """What an SDK user sees, as a Completion. `tool_json` holds the raw `partial_json` text per block
    index, as a streaming client accumulates it (the SDK's own `input` is a best-effort parse)."""
    text: list[str] = []
    reasoning: list[str] = []
    signature: str | None = None
    calls: list[ToolCall] = []
    for index, block in enumerate(message.content):
        if block.type == "text":
            text.append(block.text)
        elif block.type == "thinking":
            reasoning.append(block.thinking)
            signature = block.signature or signature
        elif block.type == "redacted_thinking":
            signature = block.data
        elif block.type == "tool_use":
            raw = (tool_json or {}).get(index)
            arguments, invalid = _arguments(block.input) if raw is None else _raw_arguments(raw)
            calls.append(ToolCall(block.id, block.name, arguments, invalid))
    usage = message.usage
    read = usage.cache_read_input_tokens or 0
    write = usage.cache_creation_input_tokens or 0
    details = usage.output_tokens_details
    return Completion(
        id=message.id,
        model=message.model or None,
        text="".join(text),
        tool_calls=tuple(calls),
        stop_reason=_stop_reason(message.stop_reason),
        reasoning="".join(reasoning) or None,
        reasoning_signature=signature,
        usage=Usage(
            input_tokens=usage.input_tokens + read + write,
            output_tokens=usage.output_tokens,
            cache_read_tokens=read,
            cache_write_tokens=write,
            reasoning_tokens=details.thinking_tokens if details else 0,
        ),
    )


def _stop_reason(value: str | None) -> StopReason | None:
    if value == "model_context_window_exceeded":
        return StopReason.CONTEXT_WINDOW_EXCEEDED
    return None if value is None else StopReason(value)


def _arguments(value: object) -> tuple[dict[str, object], str | None]:
    """Anthropic documents wrapping non-JSON tool input as {"INVALID_JSON": text}."""
    assert isinstance(value, dict)
    wrapped = value.get("INVALID_JSON")
    if len(value) == 1 and isinstance(wrapped, str):
        return _raw_arguments(wrapped)
    return value, None


def _raw_arguments(text: str) -> tuple[dict[str, object], str | None]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {}, text
    return _arguments(value) if isinstance(value, dict) else ({}, text)


@pytest.mark.parametrize("case", ALL)
def test_create(case: str, loopback: LoopbackServer, client: anthropic.Anthropic) -> None:
    loopback.queue(Reply(headers=JSON, body=MESSAGES.encode_response(ALL[case], ARGS)))
    message = client.messages.create(**ARGS)  # type: ignore[call-overload]
    assert sdk_completion(message) == MESSAGES.visible(ALL[case])
    assert loopback.received[0].path == "/v1/messages"


@pytest.mark.parametrize("case", ALL)
@pytest.mark.parametrize("delta_chars", [1, 16])
def test_stream_helper(case: str, delta_chars: int, loopback: LoopbackServer, client: anthropic.Anthropic) -> None:
    loopback.queue(Reply(headers=SSE, events=MESSAGES.encode_stream(ALL[case], ARGS, delta_chars=delta_chars)))
    tool_json: dict[int, str] = {}
    with client.messages.stream(**ARGS) as stream:  # type: ignore[arg-type]
        for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                tool_json[event.index] = tool_json.get(event.index, "") + event.delta.partial_json
        message = stream.get_final_message()
    visible = MESSAGES.visible(ALL[case])
    assert sdk_completion(message, tool_json) == visible
    # The SDK's own parse of the streamed input agrees wherever the arguments are valid JSON.
    sdk_inputs = [block.input for block in message.content if block.type == "tool_use"]
    for call, sdk_input in zip(visible.tool_calls, sdk_inputs, strict=True):
        if call.invalid_arguments is None:
            assert sdk_input == call.arguments


@pytest.mark.parametrize("case", ALL)
def test_raw_stream_events(case: str, loopback: LoopbackServer, client: anthropic.Anthropic) -> None:
    """With `stream=True` every event we send arrives as its typed SDK model, field for field."""
    events = MESSAGES.encode_stream(ALL[case], ARGS, delta_chars=5)
    loopback.queue(Reply(headers=SSE, events=events))
    with client.messages.create(**ARGS, stream=True) as stream:  # type: ignore[call-overload]
        received = [event.to_dict() for event in stream]
    assert received == [json.loads(event.data) for event in decode_all(events)]


ERROR_CLASSES = {
    ErrorKind.INVALID_REQUEST: anthropic.BadRequestError,
    ErrorKind.AUTHENTICATION: anthropic.AuthenticationError,
    ErrorKind.QUOTA_EXCEEDED: anthropic.PaymentRequiredError,
    ErrorKind.PERMISSION: anthropic.PermissionDeniedError,
    ErrorKind.NOT_FOUND: anthropic.NotFoundError,
    ErrorKind.REQUEST_TOO_LARGE: anthropic.ContentTooLargeError,
    ErrorKind.RATE_LIMIT: anthropic.RateLimitError,
    ErrorKind.SERVER_ERROR: anthropic.InternalServerError,
    ErrorKind.TIMEOUT: anthropic.GatewayTimeoutError,
    ErrorKind.OVERLOADED: anthropic.OverloadedError,
}


@pytest.mark.parametrize("kind", ErrorKind)
def test_error_classes(kind: ErrorKind, loopback: LoopbackServer, client: anthropic.Anthropic) -> None:
    reply = MESSAGES.encode_error(kind, f"llmproxy says {kind}")
    loopback.queue(Reply(reply.status, reply.headers, reply.body))
    with pytest.raises(anthropic.APIStatusError) as info:
        client.messages.create(**ARGS)  # type: ignore[call-overload]
    error = info.value
    assert type(error) is ERROR_CLASSES[kind]
    assert error.status_code == reply.status
    assert error.request_id == reply.headers["request-id"]
    assert error.api_message == f"llmproxy says {kind}"
    assert error.body == json.loads(reply.body)
    assert MESSAGES.decode_error(error.status_code, reply.body).kind is kind


def test_retries_honour_the_retry_hint(
    loopback: LoopbackServer, client: anthropic.Anthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    # The base client waits with `time.sleep` (anthropic/_base_client.py, `_sleep_for_retry`).
    monkeypatch.setattr("anthropic._base_client.time.sleep", slept.append)
    limited = MESSAGES.encode_error(ErrorKind.RATE_LIMIT, "slow down", retry_after=0.05)
    loopback.queue(
        Reply(limited.status, limited.headers, limited.body),
        Reply(limited.status, limited.headers, limited.body),
        Reply(headers=JSON, body=MESSAGES.encode_response(CASES["text"])),
    )
    message = client.with_options(max_retries=2).messages.create(**ARGS)  # type: ignore[call-overload]
    assert sdk_completion(message) == MESSAGES.visible(CASES["text"])
    assert len(loopback.received) == 3
    assert [r.headers["x-stainless-retry-count"] for r in loopback.received] == ["0", "1", "2"]
    assert slept == [0.05, 0.05]


def test_retries_run_out(
    loopback: LoopbackServer, client: anthropic.Anthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("anthropic._base_client.time.sleep", lambda _: None)
    overloaded = MESSAGES.encode_error(ErrorKind.OVERLOADED, "Overloaded", retry_after=0.01)
    loopback.queue(*[Reply(overloaded.status, overloaded.headers, overloaded.body)] * 2)
    with pytest.raises(anthropic.OverloadedError):
        client.with_options(max_retries=1).messages.create(**ARGS)  # type: ignore[call-overload]
    assert len(loopback.received) == 2


PARTIAL = Completion(
    id="msg_cut",
    model="claude-x",
    text="Half an ans",
    usage=Usage(input_tokens=5, output_tokens=30),
    error=ProviderError(ErrorKind.OVERLOADED, "Overloaded"),
)


def test_mid_stream_error_raises_in_the_stream_helper(loopback: LoopbackServer, client: anthropic.Anthropic) -> None:
    loopback.queue(Reply(headers=SSE, events=MESSAGES.encode_stream(PARTIAL, ARGS, delta_chars=4)))
    text: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as info, client.messages.stream(**ARGS) as stream:  # type: ignore[arg-type]
        text.extend(stream.text_stream)
    assert "".join(text) == "Half an ans"  # content before the error reached the caller
    assert info.value.status_code == 200  # the stream's status: the error is in-band
    assert info.value.type == "overloaded_error"
    assert info.value.body == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def test_mid_stream_error_raises_on_raw_events(loopback: LoopbackServer, client: anthropic.Anthropic) -> None:
    loopback.queue(Reply(headers=SSE, events=MESSAGES.encode_stream(PARTIAL, ARGS)))
    seen: list[str] = []
    raw = client.messages.create(**ARGS, stream=True)  # type: ignore[call-overload]
    with pytest.raises(anthropic.APIStatusError, match="overloaded_error"), raw as stream:
        seen.extend(event.type for event in stream)
    assert seen == ["message_start", "content_block_start", "content_block_delta", "content_block_stop"]
