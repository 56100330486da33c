"""The `anthropic` SDK's Bedrock client (`AnthropicBedrock`) parses exactly what the bedrock-invoke-anthropic
codec serves: Messages bodies, event-stream chunk streams, error replies, and exception frames mid-stream.

Completions are read back with the Anthropic conformance test's `sdk_completion` and compared with
`INVOKE_ANTHROPIC.visible(case)`; the requests the SDK sent are recognised by `detect` and decoded.
"""

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from llmproxy.framing.eventstream import MEDIA_TYPE
from llmproxy.model import Completion, ErrorKind, Operation, Provider, ProviderError, Usage
from llmproxy.providers.bedrock import INVOKE_ANTHROPIC
from llmproxy.providers.bedrock.errors import ERRORS
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect
from tests.conformance.server import LoopbackServer, Reply
from tests.conformance.test_anthropic_sdk import ALL, sdk_completion

pytestmark = pytest.mark.conformance

MODEL = "global.anthropic.claude-sonnet-4-5-20250929-v1:0"
ARGS: dict[str, Any] = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
JSON = {"content-type": "application/json"}
EVENTS = {"content-type": MEDIA_TYPE, "x-amzn-bedrock-content-type": "application/json"}


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as loopback:
        yield loopback


@pytest.fixture(scope="module")
def client(server: LoopbackServer) -> Iterator[anthropic.AnthropicBedrock]:
    with anthropic.AnthropicBedrock(
        aws_access_key="AKIDTEST", aws_secret_key="test", aws_region="us-east-1", base_url=server.url, max_retries=0
    ) as sdk:
        yield sdk


@pytest.fixture
def loopback(server: LoopbackServer) -> Iterator[LoopbackServer]:
    server.replies.clear()
    server.received.clear()
    yield server
    for received in server.received:  # a signed Messages body without model or stream, on a detected route
        assert "authorization" in received.headers
        route = detect("bedrock-runtime.us-east-1.amazonaws.com", received.path)
        assert route is not None
        assert (route.provider, route.operation, route.model) == (Provider.BEDROCK, Operation.INVOKE, MODEL)
        assert chat_codec(route) is INVOKE_ANTHROPIC
        body = json.loads(received.body)
        assert "model" not in body
        assert "stream" not in body
        assert "anthropic_version" in body
        assert INVOKE_ANTHROPIC.decode_request(received.body).messages[0].text == "hi"


@pytest.mark.parametrize("case", ALL)
def test_create(case: str, loopback: LoopbackServer, client: anthropic.AnthropicBedrock) -> None:
    loopback.queue(Reply(headers=JSON, body=INVOKE_ANTHROPIC.encode_response(ALL[case], ARGS)))
    message = client.messages.create(**ARGS)
    assert sdk_completion(message) == INVOKE_ANTHROPIC.visible(ALL[case])
    assert loopback.received[0].path == f"/model/{MODEL}/invoke"


@pytest.mark.parametrize("case", ALL)
@pytest.mark.parametrize("delta_chars", [1, 16])
def test_stream_helper(
    case: str, delta_chars: int, loopback: LoopbackServer, client: anthropic.AnthropicBedrock
) -> None:
    events = INVOKE_ANTHROPIC.encode_stream(ALL[case], ARGS, delta_chars=delta_chars)
    loopback.queue(Reply(headers=EVENTS, events=events))
    tool_json: dict[int, str] = {}
    with client.messages.stream(**ARGS) as stream:
        for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                tool_json[event.index] = tool_json.get(event.index, "") + event.delta.partial_json
        message = stream.get_final_message()
    assert sdk_completion(message, tool_json) == INVOKE_ANTHROPIC.visible(ALL[case])
    assert loopback.received[0].path == f"/model/{MODEL}/invoke-with-response-stream"


# The SDK picks its error class from the HTTP status alone.
STATUS_CLASSES = {
    400: anthropic.BadRequestError,
    403: anthropic.PermissionDeniedError,
    404: anthropic.NotFoundError,
    408: anthropic.APIStatusError,
    413: anthropic.ContentTooLargeError,
    429: anthropic.RateLimitError,
    500: anthropic.InternalServerError,
    503: anthropic.ServiceUnavailableError,
}


@pytest.mark.parametrize("kind", ErrorKind)
def test_error_classes(kind: ErrorKind, loopback: LoopbackServer, client: anthropic.AnthropicBedrock) -> None:
    reply = INVOKE_ANTHROPIC.encode_error(kind, f"llmproxy says {kind}")
    loopback.queue(Reply(reply.status, reply.headers, reply.body))
    with pytest.raises(anthropic.APIStatusError) as info:
        client.messages.create(**ARGS)
    error = info.value
    assert isinstance(error, STATUS_CLASSES[reply.status])
    assert error.status_code == reply.status == ERRORS[kind][0]
    assert error.body == json.loads(reply.body)
    assert INVOKE_ANTHROPIC.decode_error(error.status_code, reply.body).kind is kind


def test_retries_honour_the_retry_hint(
    loopback: LoopbackServer, client: anthropic.AnthropicBedrock, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr("anthropic._base_client.time.sleep", slept.append)
    limited = INVOKE_ANTHROPIC.encode_error(ErrorKind.RATE_LIMIT, "slow down", retry_after=0.05)
    loopback.queue(
        Reply(limited.status, limited.headers, limited.body),
        Reply(headers=JSON, body=INVOKE_ANTHROPIC.encode_response(ALL["text"], ARGS)),
    )
    message = client.with_options(max_retries=1).messages.create(**ARGS)
    assert sdk_completion(message) == INVOKE_ANTHROPIC.visible(ALL["text"])
    assert slept == [0.05]


PARTIAL = Completion(
    id="msg_cut",
    model="claude-x",
    text="Half an ans",
    usage=Usage(input_tokens=5, output_tokens=30),
    error=ProviderError(ErrorKind.OVERLOADED, "Service unavailable"),
)


@pytest.mark.parametrize("kind", ErrorKind)
def test_mid_stream_failure_raises_in_the_stream_helper(
    kind: ErrorKind, loopback: LoopbackServer, client: anthropic.AnthropicBedrock
) -> None:
    failed = Completion(text=PARTIAL.text, usage=PARTIAL.usage, error=ProviderError(kind, f"failed: {kind}"))
    loopback.queue(Reply(headers=EVENTS, events=INVOKE_ANTHROPIC.encode_stream(failed, ARGS, delta_chars=4)))
    text: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as info, client.messages.stream(**ARGS) as stream:
        text.extend(stream.text_stream)
    assert "".join(text) == "Half an ans"
    visible = INVOKE_ANTHROPIC.visible(failed).error
    assert visible is not None
    # the SDK turns the frame into an Anthropic `error` event whose type is botocore's error code
    error = info.value.body
    assert isinstance(error, dict)
    code = error["error"]["type"]
    assert code[0].upper() + code[1:] == visible.type
    assert error["error"]["message"] == f"failed: {kind}"


def test_mid_stream_failure_on_raw_events(loopback: LoopbackServer, client: anthropic.AnthropicBedrock) -> None:
    loopback.queue(Reply(headers=EVENTS, events=INVOKE_ANTHROPIC.encode_stream(PARTIAL, ARGS)))
    seen: list[str] = []
    raw = client.messages.create(**ARGS, stream=True)
    with pytest.raises(anthropic.APIStatusError, match="serviceUnavailableException"), raw as stream:
        seen.extend(event.type for event in stream)
    assert seen == ["message_start", "content_block_start", "content_block_delta", "content_block_stop"]
