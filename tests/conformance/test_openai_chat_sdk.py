"""The official `openai` SDK parses exactly what llmproxy's Chat Completions codec serves.

Every golden case goes through `chat.completions.create` (plain and `stream=True`) and, where this SDK has
it, the `chat.completions.stream()` helper; the SDK's objects are read back into a Completion and must
equal `CHAT.visible(case)`. Errors must raise the SDK's matching classes, and retry hints must be obeyed.
"""

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import openai
import pytest
from openai import OpenAI, Stream
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.base import parse_arguments
from llmproxy.providers.openai_chat import CHAT
from tests.conformance.server import LoopbackServer, Reply
from tests.golden.cases import CASES

pytestmark = pytest.mark.conformance

SDK_SLEEP = "openai._base_client.time.sleep"  # what SyncAPIClient._sleep_for_retry calls between attempts
MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]
STREAM_REQUEST = {
    "model": "golden-model",
    "messages": MESSAGES,
    "stream": True,
    "stream_options": {"include_usage": True},
}
FINISH = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_TOKENS,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "content_filter": StopReason.CONTENT_FILTER,
}
# Cases beyond the golden set that exercise wire features only Chat Completions has.
EXTRA: dict[str, Completion] = {
    "refusal": Completion(
        id="chatcmpl-refusal",
        model="golden-model",
        created=1_767_225_600,
        text="I can't help with that request.",
        stop_reason=StopReason.REFUSAL,
        usage=Usage(input_tokens=10, output_tokens=7),
    ),
    "content_filter": Completion(
        id="chatcmpl-filter",
        model="golden-model",
        created=1_767_225_600,
        text="Here is",
        stop_reason=StopReason.CONTENT_FILTER,
        usage=Usage(input_tokens=4, output_tokens=2),
    ),
}
ALL_CASES = CASES | EXTRA


@pytest.fixture
def client(loopback: LoopbackServer) -> Iterator[OpenAI]:
    with OpenAI(api_key="test-key", base_url=loopback.url + "/v1", max_retries=0) as sdk:
        yield sdk


def _usage(usage: CompletionUsage | None) -> Usage | None:
    if usage is None:
        return None
    prompt, output = usage.prompt_tokens_details, usage.completion_tokens_details
    return Usage(
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        cache_read_tokens=(prompt and prompt.cached_tokens) or 0,
        cache_write_tokens=(prompt and prompt.cache_write_tokens) or 0,
        reasoning_tokens=(output and output.reasoning_tokens) or 0,
    )


def _stop(finish: str | None, refusal: str | None) -> StopReason | None:
    if finish is None:
        return None
    stop = FINISH[finish]
    return StopReason.REFUSAL if refusal is not None and stop is StopReason.END_TURN else stop


def from_sdk(completion: ChatCompletion) -> Completion:
    """A ChatCompletion as the SDK typed it, read back into the neutral model."""
    (choice,) = [c for c in completion.choices if c.index == 0]
    message = completion.choices[0].message
    calls = []
    for call in message.tool_calls or []:
        assert call.type == "function"
        calls.append(ToolCall(call.id, call.function.name, *parse_arguments(call.function.arguments)))
    return Completion(
        id=completion.id,
        model=completion.model or None,
        created=completion.created,
        text=(message.content or "") + (message.refusal or ""),
        tool_calls=tuple(calls),
        stop_reason=_stop(choice.finish_reason, message.refusal),
        usage=_usage(completion.usage),
    )


def from_chunks(chunks: list[ChatCompletionChunk]) -> Completion:
    """Typed chunks merged the way an SDK user does: text concatenated, tool calls by index."""
    content: list[str] = []
    refusal: list[str] | None = None
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    usage = None
    for chunk in chunks:
        assert (chunk.id, chunk.created, chunk.model) == (chunks[0].id, chunks[0].created, chunks[0].model)
        usage = chunk.usage or usage
        for choice in chunk.choices:
            assert choice.index == 0
            finish = choice.finish_reason or finish
            content.append(choice.delta.content or "")
            if choice.delta.refusal is not None:
                refusal = [*(refusal or []), choice.delta.refusal]
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(delta.index, {"id": None, "name": None, "arguments": []})
                if delta.id is not None:
                    assert call["id"] is None, "a tool call's id is sent once"
                    call["id"] = delta.id
                if delta.function is not None and delta.function.name is not None:
                    assert call["name"] is None, "a tool call's name is sent once"
                    call["name"] = delta.function.name
                if delta.function is not None and delta.function.arguments:
                    call["arguments"].append(delta.function.arguments)
    joined_refusal = None if refusal is None else "".join(refusal)
    return Completion(
        id=chunks[0].id,
        model=chunks[0].model or None,
        created=chunks[0].created,
        text="".join(content) + (joined_refusal or ""),
        tool_calls=tuple(
            ToolCall(call["id"], call["name"], *parse_arguments("".join(call["arguments"])))
            for _, call in sorted(calls.items())
        ),
        stop_reason=_stop(finish, joined_refusal),
        usage=_usage(usage),
    )


def json_reply(body: bytes) -> Reply:
    return Reply(headers={"content-type": "application/json", "x-request-id": "req_test"}, body=body)


def stream_reply(events: list[bytes]) -> Reply:
    return Reply(headers={"content-type": CHAT.stream_media_type}, events=events)


@pytest.mark.parametrize("name", list(ALL_CASES))
def test_body(loopback: LoopbackServer, client: OpenAI, name: str) -> None:
    case = ALL_CASES[name]
    loopback.queue(json_reply(CHAT.encode_response(case, {"model": "golden-model", "messages": MESSAGES})))
    completion = client.chat.completions.create(model="golden-model", messages=MESSAGES)
    assert from_sdk(completion) == CHAT.visible(case)
    assert loopback.received[0].path == "/v1/chat/completions"


@pytest.mark.parametrize("delta_chars", [1, 7, 16])
@pytest.mark.parametrize("name", list(ALL_CASES))
def test_stream(loopback: LoopbackServer, client: OpenAI, name: str, delta_chars: int) -> None:
    case = ALL_CASES[name]
    loopback.queue(stream_reply(CHAT.encode_stream(case, STREAM_REQUEST, delta_chars=delta_chars)))
    stream = client.chat.completions.create(
        model="golden-model", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    with stream:
        chunks = list(stream)
    assert from_chunks(chunks) == CHAT.visible(case)


def final_completion(stream: Any, stop: StopReason | None) -> ChatCompletion:
    """The helper's final completion; for length and content-filter stops it refuses to parse (by design)
    and hands the accumulated completion over on the exception instead."""
    refusing: dict[StopReason, type[openai.OpenAIError]] = {
        StopReason.MAX_TOKENS: openai.LengthFinishReasonError,
        StopReason.CONTENT_FILTER: openai.ContentFilterFinishReasonError,
    }
    if stop not in refusing:
        return stream.get_final_completion()  # type: ignore[no-any-return]
    with pytest.raises(refusing[stop]) as caught:
        stream.get_final_completion()
    completion = caught.value.completion  # type: ignore[attr-defined]
    assert isinstance(completion, ChatCompletion)
    return completion


@pytest.mark.skipif(not hasattr(openai.resources.chat.Completions, "stream"), reason="no .stream() helper")
@pytest.mark.parametrize("name", list(ALL_CASES))
def test_stream_helper_final_completion(loopback: LoopbackServer, client: OpenAI, name: str) -> None:
    case = ALL_CASES[name]
    loopback.queue(stream_reply(CHAT.encode_stream(case, STREAM_REQUEST, delta_chars=5)))
    with client.chat.completions.stream(
        model="golden-model", messages=MESSAGES, stream_options={"include_usage": True}
    ) as stream:
        events = list(stream)
        final = final_completion(stream, case.stop_reason)
    assert from_sdk(final) == CHAT.visible(case)
    assert "".join(e.delta for e in events if e.type == "content.delta") == (
        "" if case.stop_reason is StopReason.REFUSAL else case.text
    )


def test_stream_without_usage_request(loopback: LoopbackServer, client: OpenAI) -> None:
    """Without `stream_options.include_usage` no usage chunk is sent and chunks carry no `usage` key."""
    request = {"model": "golden-model", "messages": MESSAGES, "stream": True}
    loopback.queue(stream_reply(CHAT.encode_stream(CASES["text"], request)))
    with client.chat.completions.create(model="golden-model", messages=MESSAGES, stream=True) as stream:
        chunks = list(stream)
    assert all(chunk.choices and chunk.usage is None for chunk in chunks)
    assert from_chunks(chunks) == replace(CHAT.visible(CASES["text"]), usage=None)


SDK_ERRORS: dict[ErrorKind, type[openai.APIStatusError]] = {
    ErrorKind.INVALID_REQUEST: openai.BadRequestError,
    ErrorKind.AUTHENTICATION: openai.AuthenticationError,
    ErrorKind.PERMISSION: openai.PermissionDeniedError,
    ErrorKind.NOT_FOUND: openai.NotFoundError,
    ErrorKind.REQUEST_TOO_LARGE: openai.APIStatusError,
    ErrorKind.RATE_LIMIT: openai.RateLimitError,
    ErrorKind.QUOTA_EXCEEDED: openai.RateLimitError,
    ErrorKind.SERVER_ERROR: openai.InternalServerError,
    ErrorKind.OVERLOADED: openai.InternalServerError,
    ErrorKind.TIMEOUT: openai.InternalServerError,
}


@pytest.mark.parametrize("kind", list(ErrorKind))
def test_error_classes(loopback: LoopbackServer, client: OpenAI, kind: ErrorKind) -> None:
    reply = CHAT.encode_error(kind, f"llmproxy says {kind}")
    loopback.queue(Reply(reply.status, reply.headers, reply.body))
    with pytest.raises(SDK_ERRORS[kind]) as caught:
        client.chat.completions.create(model="golden-model", messages=MESSAGES)
    error = caught.value
    assert type(error) is SDK_ERRORS[kind]
    assert error.status_code == reply.status
    assert f"llmproxy says {kind}" in error.message
    wire = json.loads(reply.body)["error"]
    assert (error.type, error.code, error.param) == (wire["type"], wire["code"], None)
    decoded = CHAT.decode_error(reply.status, reply.body)
    assert (decoded.kind, decoded.type) == (kind, wire["type"])
    assert len(loopback.received) == 1


def test_retries_honour_retry_after(loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(SDK_SLEEP, slept.append)
    limited = CHAT.encode_error(ErrorKind.RATE_LIMIT, "Rate limit reached", retry_after=0.05)
    loopback.queue(
        Reply(limited.status, limited.headers, limited.body),
        Reply(limited.status, limited.headers, limited.body),
        json_reply(CHAT.encode_response(CASES["text"])),
    )
    with OpenAI(api_key="test-key", base_url=loopback.url + "/v1", max_retries=2) as sdk:
        completion = sdk.chat.completions.create(model="golden-model", messages=MESSAGES)
    assert from_sdk(completion) == CHAT.visible(CASES["text"])
    assert len(loopback.received) == 3
    assert [r.headers.get("x-stainless-retry-count") for r in loopback.received] == ["0", "1", "2"]
    assert slept == [0.05, 0.05]


def test_retries_give_up_after_max_retries(loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(SDK_SLEEP, slept.append)
    overloaded = CHAT.encode_error(ErrorKind.OVERLOADED, "busy", retry_after=0.25)
    loopback.queue(*[Reply(overloaded.status, overloaded.headers, overloaded.body)] * 2)
    sdk = OpenAI(api_key="test-key", base_url=loopback.url + "/v1", max_retries=1)
    with sdk, pytest.raises(openai.InternalServerError):
        sdk.chat.completions.create(model="golden-model", messages=MESSAGES)
    assert (len(loopback.received), slept) == (2, [0.25])


def _texts(stream: Stream[ChatCompletionChunk]) -> Iterator[str]:
    with stream:
        for chunk in stream:
            yield from (choice.delta.content or "" for choice in chunk.choices)


@pytest.mark.parametrize("kind", [ErrorKind.SERVER_ERROR, ErrorKind.OVERLOADED, ErrorKind.RATE_LIMIT])
def test_mid_stream_error_raises_api_error(loopback: LoopbackServer, client: OpenAI, kind: ErrorKind) -> None:
    failed = Completion(
        id="chatcmpl-fail",
        model="golden-model",
        created=1,
        text="Partial answer",
        error=ProviderError(kind, "The server had an error while processing your request."),
    )
    loopback.queue(stream_reply(CHAT.encode_stream(failed, STREAM_REQUEST, delta_chars=4)))
    received: list[str] = []
    stream = client.chat.completions.create(
        model="golden-model", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    with pytest.raises(openai.APIError) as caught:
        received.extend(_texts(stream))
    assert type(caught.value) is openai.APIError
    assert "".join(received) == "Partial answer"
    assert caught.value.message == "The server had an error while processing your request."
    wire = json.loads(CHAT.encode_error(kind, "").body)["error"]
    assert (caught.value.type, caught.value.code) == (wire["type"], wire["code"])
    assert CHAT.visible(failed).error == ProviderError(kind, caught.value.message, wire["type"])


def test_request_the_sdk_sends_decodes(loopback: LoopbackServer, client: OpenAI) -> None:
    """The SDK's own request body, with tools and a tool round trip, decodes into the expected Conversation."""
    loopback.queue(json_reply(CHAT.encode_response(CASES["text"])))
    client.chat.completions.create(
        model="golden-model",
        messages=[
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ],
        tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
        max_completion_tokens=64,
        reasoning_effort="low",
    )
    conversation = CHAT.decode_request(loopback.received[0].body)
    assert conversation.model == "golden-model"
    assert [m.role.value for m in conversation.messages] == ["developer", "user", "assistant", "tool"]
    assert conversation.messages[2].tool_calls == (ToolCall("call_1", "get_weather", {}),)
    assert conversation.messages[3].tool_results[0].name == "get_weather"
    assert (conversation.max_output_tokens, conversation.reasoning_requested) == (64, True)
    assert conversation.tools[0].parameters == {"type": "object"}
