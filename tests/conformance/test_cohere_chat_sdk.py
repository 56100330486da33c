"""The official `cohere` SDK parses what llmproxy's Cohere chat codecs serve, on 127.0.0.1: v2 `ClientV2.chat`
and `chat_stream` (typed SSE events) and v1 `Client.chat` and `chat_stream` (NDJSON), for every golden case.
What the SDK returns is read back into a Completion and must equal `visible(case)`; the requests it sent are
detected as Cohere chat and decode. Error replies raise the SDK's class for their status, a 429 with
`retry-after-ms` is retried after exactly that delay, and a stream that fails part-way ends with the error
after its content."""

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import cohere
import httpx
import pytest
from cohere.core.api_error import ApiError

from llmproxy.model import Completion, ErrorKind, ProviderError, Role, StopReason, ToolCall, Usage
from llmproxy.providers.base import RateLimits, parse_arguments
from llmproxy.providers.cohere_chat import CHAT, CHAT_V1
from llmproxy.providers.cohere_chat import wire as cohere_wire
from llmproxy.providers.routes import detect, with_body
from tests.conformance.server import LoopbackServer, Reply
from tests.golden.cases import CASES

pytestmark = pytest.mark.conformance

JSON = {"content-type": "application/json"}
SSE = {"content-type": "text/event-stream"}
NDJSON = {"content-type": "application/stream+json"}
NO_RETRIES: Any = {"max_retries": 0}
MESSAGES: Any = [{"role": "user", "content": "Hello"}]


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


@pytest.fixture
def v2(loopback: LoopbackServer, http: httpx.Client) -> Iterator[cohere.ClientV2]:
    yield cohere.ClientV2(api_key="test-key", base_url=loopback.url, httpx_client=http)
    _check_requests(loopback, "v2")


@pytest.fixture
def v1(loopback: LoopbackServer, http: httpx.Client) -> Iterator[cohere.Client]:
    yield cohere.Client(api_key="test-key", base_url=loopback.url, httpx_client=http)
    _check_requests(loopback, "v1")


def _check_requests(loopback: LoopbackServer, version: str) -> None:
    """Every request the SDK sent is Cohere chat of that version, streaming as its body says, and decodes."""
    for received in loopback.received:
        route = detect("127.0.0.1", received.path, received.headers)
        assert route is not None
        body = json.loads(received.body)
        assert (route.provider, route.operation, route.version) == ("cohere", "chat", version)
        assert with_body(route, body).streaming is body.get("stream", False)
        codec = CHAT if version == "v2" else CHAT_V1
        assert codec.decode_request(received.body).messages[-1].role is Role.USER


def _usage(usage: Any) -> Usage | None:
    units = usage.billed_units if usage is not None else None
    if units is None:
        return None
    return Usage(int(units.input_tokens or 0), int(units.output_tokens or 0))


def _call(call: Any, arguments: str) -> ToolCall:
    parsed, invalid = parse_arguments(arguments)
    return ToolCall(call.id or "", call.function.name or "", parsed, invalid)


def from_v2(response: Any) -> Completion:
    message = response.message
    text = "".join(item.text for item in message.content or [] if item.type == "text")
    thinking = [item.thinking for item in message.content or [] if item.type == "thinking"]
    reasoning = "\n\n".join([*thinking, *([message.tool_plan] if message.tool_plan else [])]) or None
    calls = tuple(_call(call, call.function.arguments) for call in message.tool_calls or [])
    return Completion(
        id=response.id,
        text=text,
        tool_calls=calls,
        stop_reason=cohere_wire.decode_stop(response.finish_reason),
        reasoning=reasoning,
        usage=_usage(response.usage),
    )


def from_v2_stream(events: Iterable[Any]) -> Completion:
    ident, text, thinking, plan, kinds = None, [], [], [], {}
    calls: dict[int, list[Any]] = {}
    finish = usage = error = None
    for event in events:
        if event.type == "message-start":
            ident = event.id
        elif event.type == "content-start":
            kinds[event.index] = event.delta.message.content.type
        elif event.type == "content-delta":
            content = event.delta.message.content
            (thinking if kinds[event.index] == "thinking" else text).append(content.thinking or content.text or "")
        elif event.type == "tool-plan-delta":
            plan.append(event.delta.message.tool_plan)
        elif event.type == "tool-call-start":
            calls[event.index] = [event.delta.message.tool_calls, []]
        elif event.type == "tool-call-delta":
            calls[event.index][1].append(event.delta.message.tool_calls.function.arguments)
        elif event.type == "message-end":
            finish, usage, error = event.delta.finish_reason, event.delta.usage, event.delta.error
    reasoning = [part for part in ("".join(thinking), "".join(plan)) if part]
    return Completion(
        id=ident,
        text="".join(text),
        tool_calls=tuple(_call(start, "".join(pieces)) for start, pieces in (calls[i] for i in sorted(calls))),
        stop_reason=None if finish == "ERROR" else cohere_wire.decode_stop(finish),
        reasoning="\n\n".join(reasoning) or None,
        usage=_usage(usage),
        error=None if finish != "ERROR" else ProviderError(ErrorKind.SERVER_ERROR, error or ""),
    )


def from_v1(response: Any) -> Completion:
    calls = tuple(ToolCall("", call.name, dict(call.parameters)) for call in response.tool_calls or [])
    stop = cohere_wire.decode_stop(response.finish_reason)
    return Completion(
        id=response.response_id,
        text=response.text,
        tool_calls=calls,
        stop_reason=StopReason.TOOL_USE if calls and stop is StopReason.END_TURN else stop,
        usage=_usage(response.meta),
    )


@pytest.mark.parametrize("case", CASES)
def test_v2_chat(loopback: LoopbackServer, v2: cohere.ClientV2, case: str) -> None:
    loopback.queue(Reply(200, JSON, CHAT.encode_response(CASES[case])))
    assert from_v2(v2.chat(model="command-a-03-2025", messages=MESSAGES)) == CHAT.visible(CASES[case])


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("delta_chars", [1, 16])
def test_v2_chat_stream(loopback: LoopbackServer, v2: cohere.ClientV2, case: str, delta_chars: int) -> None:
    loopback.queue(Reply(200, SSE, events=CHAT.encode_stream(CASES[case], delta_chars=delta_chars)))
    events = v2.chat_stream(model="command-a-03-2025", messages=MESSAGES)
    assert from_v2_stream(events) == CHAT.visible(CASES[case])


def test_v2_stream_that_fails_part_way(loopback: LoopbackServer, v2: cohere.ClientV2) -> None:
    failed = replace(CASES["text"], error=ProviderError(ErrorKind.OVERLOADED, "model overloaded"))
    loopback.queue(Reply(200, SSE, events=CHAT.encode_stream(failed)))
    got = from_v2_stream(v2.chat_stream(model="command-a-03-2025", messages=MESSAGES))
    assert (got.text, got.error) == (failed.text, ProviderError(ErrorKind.SERVER_ERROR, "model overloaded"))
    assert got == CHAT.visible(failed)


@pytest.mark.parametrize("case", CASES)
def test_v1_chat(loopback: LoopbackServer, v1: cohere.Client, case: str) -> None:
    loopback.queue(Reply(200, JSON, CHAT_V1.encode_response(CASES[case])))
    assert from_v1(v1.chat(model="command-r-plus", message="Hello")) == CHAT_V1.visible(CASES[case])


# cohere 7.3's v1 union parsing uses pydantic APIs that pydantic 2 deprecates: the SDK's warnings, not ours
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning")
@pytest.mark.parametrize("case", CASES)
def test_v1_chat_stream(loopback: LoopbackServer, v1: cohere.Client, case: str) -> None:
    loopback.queue(Reply(200, NDJSON, events=CHAT_V1.encode_stream(CASES[case], delta_chars=4)))
    events = list(v1.chat_stream(model="command-r-plus", message="Hello"))
    end = events[-1]
    assert end.event_type == "stream-end"
    streamed = "".join(event.text for event in events if event.event_type == "text-generation")
    assert streamed == CASES[case].text
    assert from_v1(end.response) == CHAT_V1.visible(CASES[case])


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        (ErrorKind.INVALID_REQUEST, cohere.BadRequestError),
        (ErrorKind.AUTHENTICATION, cohere.UnauthorizedError),
        (ErrorKind.PERMISSION, cohere.ForbiddenError),
        (ErrorKind.NOT_FOUND, cohere.NotFoundError),
        (ErrorKind.RATE_LIMIT, cohere.TooManyRequestsError),
        (ErrorKind.SERVER_ERROR, cohere.InternalServerError),
        (ErrorKind.OVERLOADED, cohere.ServiceUnavailableError),
        (ErrorKind.TIMEOUT, cohere.GatewayTimeoutError),
    ],
)
@pytest.mark.parametrize("streamed", [False, True])
def test_errors(
    loopback: LoopbackServer, v2: cohere.ClientV2, kind: ErrorKind, error: type[ApiError], streamed: bool
) -> None:
    reply = CHAT.encode_error(kind, "llmproxy says no")
    loopback.queue(Reply(reply.status, reply.headers, reply.body))

    def call() -> object:
        if streamed:
            return list(v2.chat_stream(model="command-a-03-2025", messages=MESSAGES, request_options=NO_RETRIES))
        return v2.chat(model="command-a-03-2025", messages=MESSAGES, request_options=NO_RETRIES)

    with pytest.raises(error) as caught:
        call()
    assert (caught.value.status_code, caught.value.body) == (reply.status, {"message": "llmproxy says no"})
    assert CHAT.decode_error(reply.status, reply.body).kind is kind


def test_a_rate_limit_is_retried_after_the_advertised_delay(loopback: LoopbackServer, v2: cohere.ClientV2) -> None:
    limited = CHAT.encode_error(ErrorKind.RATE_LIMIT, "slow down", retry_after=0.4)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    headers = {**limited.headers, **CHAT.rate_limit_headers(RateLimits(requests_limit=20, requests_remaining=0), now)}
    loopback.queue(Reply(limited.status, headers, limited.body), Reply(200, JSON, CHAT.encode_response(CASES["text"])))
    started = time.monotonic()
    response = v2.chat(model="command-a-03-2025", messages=MESSAGES, request_options={"max_retries": 1})
    assert time.monotonic() - started >= 0.4
    assert from_v2(response) == CHAT.visible(CASES["text"])
    assert headers["x-trial-endpoint-call-limit"] == "20"
    assert headers["x-trial-endpoint-call-remaining"] == "0"
