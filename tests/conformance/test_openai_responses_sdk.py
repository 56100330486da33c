"""The official openai SDK parses exactly what llmproxy's Responses codec serves, on 127.0.0.1.

Each SDK `Response` is turned back into a Completion by `sdk_completion` (written against the SDK's types,
not the codec) and compared with `RESPONSES.visible(case)`. The Codex CLI base URL
(`…/backend-api/codex`) is served the same way.
"""

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai.types.responses import Response

from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.base import parse_arguments
from llmproxy.providers.openai_responses import RESPONSES
from tests.conformance.server import LoopbackServer, Reply
from tests.golden.cases import CASES

pytestmark = pytest.mark.conformance

FAILED = Completion(
    id="resp_fail",
    model="golden-model",
    created=1_767_225_600,
    text="Half an ans",
    error=ProviderError(ErrorKind.RATE_LIMIT, "Rate limit reached. Please try again in 1.5s.", "rate_limit_exceeded"),
    usage=Usage(input_tokens=9, output_tokens=3),
)
REQUEST: dict[str, Any] = {"model": "gpt-5-codex", "input": "hi"}
CODE_KINDS = {"rate_limit_exceeded": ErrorKind.RATE_LIMIT}  # the codes these tests stream
JSON = {"content-type": "application/json"}
SSE = {"content-type": "text/event-stream"}


def sdk_completion(response: Response) -> Completion:
    """What the SDK understood, in llmproxy's terms."""
    text: list[str] = []
    calls: list[ToolCall] = []
    summaries: list[str] = []
    signature: str | None = None
    for item in response.output:
        if item.type == "message":
            text.extend(part.text for part in item.content if part.type == "output_text")
        elif item.type == "function_call":
            calls.append(ToolCall(item.call_id, item.name, *parse_arguments(item.arguments)))
        elif item.type == "reasoning":
            summaries.extend(part.text for part in item.summary)
            signature = signature or item.encrypted_content
    usage = response.usage
    if response.error is not None:
        stop = None
    elif response.status == "incomplete":
        assert response.incomplete_details is not None
        stop = StopReason.MAX_TOKENS if response.incomplete_details.reason == "max_output_tokens" else None
    else:
        stop = StopReason.TOOL_USE if calls else StopReason.END_TURN
    return Completion(
        id=response.id,
        model=response.model,
        created=int(response.created_at),
        text="".join(text),
        tool_calls=tuple(calls),
        stop_reason=stop,
        reasoning="\n\n".join(summaries) or None,
        reasoning_signature=signature,
        usage=None
        if usage is None
        else Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.input_tokens_details.cached_tokens,
            cache_write_tokens=usage.input_tokens_details.cache_write_tokens,
            reasoning_tokens=usage.output_tokens_details.reasoning_tokens,
        ),
        error=None
        if response.error is None
        else ProviderError(CODE_KINDS[response.error.code], response.error.message, response.error.code),
    )


@pytest.fixture(params=["/v1", "/backend-api/codex"], ids=["api", "codex"])
def client(request: pytest.FixtureRequest, loopback: LoopbackServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(api_key="test-key", base_url=loopback.url + request.param, max_retries=0) as sdk:
        yield sdk
    assert all(r.path == request.param + "/responses" for r in loopback.received)


@pytest.mark.parametrize("case", CASES, ids=CASES.keys())
def test_create(case: str, client: openai.OpenAI, loopback: LoopbackServer) -> None:
    loopback.queue(Reply(headers=JSON, body=RESPONSES.encode_response(CASES[case], REQUEST)))
    response = client.responses.create(**REQUEST)
    assert sdk_completion(response) == RESPONSES.visible(CASES[case])
    assert response.output_text == CASES[case].text
    assert RESPONSES.decode_request(loopback.received[0].body).stream is False


@pytest.mark.parametrize("case", CASES, ids=CASES.keys())
def test_stream_helper(case: str, client: openai.OpenAI, loopback: LoopbackServer) -> None:
    completion = CASES[case]
    loopback.queue(Reply(headers=SSE, events=RESPONSES.encode_stream(completion, REQUEST, delta_chars=5)))
    with client.responses.stream(**REQUEST) as stream:
        events = list(stream)
        deltas = [e for e in events if e.type == "response.output_text.delta"]
        assert "".join(e.delta for e in deltas) == completion.text
        assert all(e.snapshot == completion.text[: len(e.snapshot)] for e in deltas)
        if completion.stop_reason is StopReason.MAX_TOKENS:
            # The helper only finishes on response.completed; the API ends a cut answer with .incomplete.
            with pytest.raises(RuntimeError, match=r"response\.completed"):
                stream.get_final_response()
            (last,) = [e for e in events if e.type == "response.incomplete"]
            final: Response = last.response
        else:
            final = stream.get_final_response()
    assert sdk_completion(final) == RESPONSES.visible(completion)
    assert RESPONSES.decode_request(loopback.received[0].body).stream is True


@pytest.mark.parametrize("case", ["parallel_tools", "reasoning", "unicode_multiline"])
def test_raw_stream(case: str, client: openai.OpenAI, loopback: LoopbackServer) -> None:
    frames = RESPONSES.encode_stream(CASES[case], delta_chars=3)
    loopback.queue(Reply(headers=SSE, events=frames))
    events = list(client.responses.create(**REQUEST, stream=True))
    assert [e.sequence_number for e in events] == list(range(len(frames)))
    assert events[-1].type == "response.completed"
    assert sdk_completion(events[-1].response) == RESPONSES.visible(CASES[case])
    arguments = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert "".join(arguments) == "".join(
        json.dumps(c.arguments, ensure_ascii=False, separators=(",", ":")) for c in CASES[case].tool_calls
    )


def test_failed_stream(client: openai.OpenAI, loopback: LoopbackServer) -> None:
    loopback.queue(Reply(headers=SSE, events=RESPONSES.encode_stream(FAILED)))
    events = list(client.responses.create(**REQUEST, stream=True))  # the SDK does not raise on it
    assert events[-1].type == "response.failed"
    assert sdk_completion(events[-1].response) == RESPONSES.visible(FAILED)
    loopback.queue(Reply(headers=SSE, events=RESPONSES.encode_stream(FAILED)))
    with client.responses.stream(**REQUEST) as stream, pytest.raises(RuntimeError, match=r"response\.completed"):
        stream.get_final_response()


ERROR_CLASSES = {
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


@pytest.mark.parametrize("kind", ErrorKind)
def test_error_bodies(kind: ErrorKind, client: openai.OpenAI, loopback: LoopbackServer) -> None:
    reply = RESPONSES.encode_error(kind, f"llmproxy says {kind}")
    loopback.queue(Reply(reply.status, reply.headers, reply.body))
    with pytest.raises(ERROR_CLASSES[kind]) as raised:
        client.responses.create(**REQUEST)
    error = raised.value
    assert type(error) is ERROR_CLASSES[kind]
    assert error.status_code == reply.status
    assert error.message == f"Error code: {reply.status} - llmproxy says {kind}"
    assert error.body == json.loads(reply.body)["error"]
    assert (error.code, error.type) == (
        json.loads(reply.body)["error"]["code"],
        json.loads(reply.body)["error"]["type"],
    )
    assert RESPONSES.decode_error(reply.status, reply.body).kind is kind
    assert len(loopback.received) == 1


def test_retries_honour_retry_after(
    client: openai.OpenAI, loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr("openai._base_client.time.sleep", slept.append)  # what _sleep_for_retry calls
    busy = RESPONSES.encode_error(ErrorKind.RATE_LIMIT, "slow down", retry_after=0.05)
    loopback.queue(
        Reply(busy.status, busy.headers, busy.body),
        Reply(busy.status, busy.headers, busy.body),
        Reply(headers=JSON, body=RESPONSES.encode_response(CASES["text"])),
    )
    response = client.with_options(max_retries=2).responses.create(**REQUEST)
    assert sdk_completion(response) == RESPONSES.visible(CASES["text"])
    assert len(loopback.received) == 3
    assert slept == [0.05, 0.05]
    assert [r.headers.get("x-stainless-retry-count") for r in loopback.received] == ["0", "1", "2"]
