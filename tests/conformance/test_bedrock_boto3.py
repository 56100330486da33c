"""boto3's `bedrock-runtime` client parses exactly what llmproxy's Bedrock codecs serve.

Converse and ConverseStream results are read back into a Completion by `sdk_completion` / `sdk_stream`
(written from botocore's documented output shapes, not from the codec) and must equal `CONVERSE.visible`.
InvokeModel bodies are opaque to boto3, so for them the event-stream framing is what is checked: botocore
yields every chunk's bytes, in order. Errors must surface as botocore's modeled exceptions, and failures
mid-stream as `EventStreamError` while iterating. Every request boto3 sent is recognised by `detect`.
"""

import base64
import contextlib
import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

from llmproxy.framing.eventstream import MEDIA_TYPE
from llmproxy.model import Completion, Conversation, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.bedrock import CONVERSE, INVOKE_ANTHROPIC, SIGV4_HEADERS
from llmproxy.providers.bedrock.errors import ERRORS
from llmproxy.providers.bedrock.wire import event_frame
from llmproxy.providers.routes import detect
from tests.conformance.server import LoopbackServer, Reply
from tests.golden.cases import CASES

pytestmark = pytest.mark.conformance

MODEL = "us.anthropic.claude-sonnet-4-20250514-v1:0"
MESSAGES = [{"role": "user", "content": [{"text": "hi"}]}]
JSON = {"content-type": "application/json"}
EVENTS = {"content-type": MEDIA_TYPE}
EXTRA: dict[str, Completion] = {
    "redacted_reasoning": Completion(text="Done.", reasoning_signature="RURBQ1RFRA==", usage=Usage(9, 4)),
    "content_filtered": Completion(text="I can't", stop_reason=StopReason.CONTENT_FILTER, usage=Usage(3, 2)),
    "context_window": Completion(
        tool_calls=(ToolCall("tooluse_a", "noop", {}), ToolCall("tooluse_b", "nested", {"a": {"b": [None, True]}})),
        stop_reason=StopReason.CONTEXT_WINDOW_EXCEEDED,
    ),
}
ALL = {**CASES, **EXTRA}


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as loopback:
        yield loopback


@pytest.fixture(scope="module")
def client(server: LoopbackServer) -> Iterator[Any]:
    sdk = boto3.client(
        "bedrock-runtime",
        endpoint_url=server.url,
        region_name="us-east-1",
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="test",
        config=Config(retries={"mode": "standard", "total_max_attempts": 1}),
    )
    yield sdk
    sdk.close()


@pytest.fixture
def loopback(server: LoopbackServer) -> Iterator[LoopbackServer]:
    server.replies.clear()
    server.received.clear()
    yield server
    for received in server.received:  # boto3 sent a signed request to a path we recognise
        assert SIGV4_HEADERS & set(received.headers) >= {"authorization", "x-amz-date"}
        route = detect("bedrock-runtime.us-east-1.amazonaws.com", received.path)
        assert route is not None
        assert route.model == MODEL


def _arguments(value: Any) -> tuple[dict[str, Any], str | None]:
    """Non-JSON tool input is wrapped as {"INVALID_JSON": text}, as Anthropic documents."""
    wrapped = value.get("INVALID_JSON")
    if len(value) == 1 and isinstance(wrapped, str):
        return _raw_arguments(wrapped)
    return value, None


def _raw_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {}, text
    return _arguments(value) if isinstance(value, dict) else ({}, text)


def _usage(usage: dict[str, int]) -> Usage:
    read, write = usage.get("cacheReadInputTokens", 0), usage.get("cacheWriteInputTokens", 0)
    assert usage["totalTokens"] == usage["inputTokens"] + read + write + usage["outputTokens"]
    return Usage(usage["inputTokens"] + read + write, usage["outputTokens"], read, write)


def _stop(value: str | None) -> StopReason | None:
    names = {"content_filtered": StopReason.CONTENT_FILTER, "model_context_window_exceeded": "context_window_exceeded"}
    return None if value is None else StopReason(names.get(value, value))


def sdk_completion(response: dict[str, Any]) -> Completion:
    """A Converse response as boto3 returns it (blobs already base64-decoded to bytes)."""
    text: list[str] = []
    reasoning: list[str] = []
    signature: str | None = None
    calls: list[ToolCall] = []
    for block in response["output"]["message"]["content"]:
        if "text" in block:
            text.append(block["text"])
        elif "reasoningContent" in block:
            content = block["reasoningContent"]
            if "redactedContent" in content:
                signature = base64.b64encode(content["redactedContent"]).decode()
            else:
                reasoning.append(content["reasoningText"]["text"])
                signature = content["reasoningText"].get("signature", signature)
        elif "toolUse" in block:
            use = block["toolUse"]
            calls.append(ToolCall(use["toolUseId"], use["name"], *_arguments(use["input"])))
    assert response["metrics"]["latencyMs"] >= 0
    return Completion(
        text="".join(text),
        tool_calls=tuple(calls),
        stop_reason=_stop(response.get("stopReason")),
        reasoning="".join(reasoning) or None,
        reasoning_signature=signature,
        usage=_usage(response["usage"]),
    )


def sdk_stream(events: Any) -> Completion:
    """A ConverseStream's events as boto3 yields them, accumulated as a streaming client does."""
    blocks: dict[int, dict[str, Any]] = {}
    stop: str | None = None
    usage: Usage | None = None
    for event in events:
        ((name, body),) = event.items()
        if name == "contentBlockStart":
            blocks[body["contentBlockIndex"]] = {"tool": body["start"]["toolUse"], "text": ""}
        elif name == "contentBlockDelta":
            block = blocks.setdefault(body["contentBlockIndex"], {"text": ""})
            delta = body["delta"]
            if "reasoningContent" in delta:
                block["reasoning"] = True
                reasoning = delta["reasoningContent"]
                block["text"] += reasoning.get("text", "")
                if "redactedContent" in reasoning:
                    block["signature"] = base64.b64encode(reasoning["redactedContent"]).decode()
                block["signature"] = reasoning.get("signature", block.get("signature"))
            else:
                block["text"] += delta["toolUse"]["input"] if "toolUse" in delta else delta["text"]
        elif name == "messageStop":
            stop = body.get("stopReason")
        elif name == "metadata":
            usage = _usage(body["usage"])
    ordered = [blocks[i] for i in sorted(blocks)]
    calls = [
        ToolCall(b["tool"]["toolUseId"], b["tool"]["name"], *_raw_arguments(b["text"])) for b in ordered if "tool" in b
    ]
    reasoning = [b for b in ordered if b.get("reasoning")]
    return Completion(
        text="".join(b["text"] for b in ordered if "tool" not in b and not b.get("reasoning")),
        tool_calls=tuple(calls),
        stop_reason=_stop(stop),
        reasoning="".join(b["text"] for b in reasoning) or None,
        reasoning_signature=next((b["signature"] for b in reasoning if b.get("signature")), None),
        usage=usage,
    )


@pytest.mark.parametrize("case", ALL)
def test_converse(case: str, loopback: LoopbackServer, client: Any) -> None:
    loopback.queue(Reply(headers=JSON, body=CONVERSE.encode_response(ALL[case])))
    response = client.converse(modelId=MODEL, messages=MESSAGES)
    assert sdk_completion(response) == CONVERSE.visible(ALL[case])
    assert loopback.received[0].path.endswith("/converse")


@pytest.mark.parametrize("case", ALL)
@pytest.mark.parametrize("delta_chars", [1, 16])
def test_converse_stream(case: str, delta_chars: int, loopback: LoopbackServer, client: Any) -> None:
    loopback.queue(Reply(headers=EVENTS, events=CONVERSE.encode_stream(ALL[case], delta_chars=delta_chars)))
    response = client.converse_stream(modelId=MODEL, messages=MESSAGES)
    assert sdk_stream(response["stream"]) == CONVERSE.visible(ALL[case])
    assert loopback.received[0].path.endswith("/converse-stream")


def test_the_request_boto3_sends_decodes(loopback: LoopbackServer, client: Any) -> None:
    loopback.queue(Reply(headers=JSON, body=CONVERSE.encode_response(CASES["text"])))
    client.converse(
        modelId=MODEL,
        system=[{"text": "Be brief."}, {"cachePoint": {"type": "default"}}],
        messages=[
            {
                "role": "user",
                "content": [{"text": "Look"}, {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}],
            },
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "see", "input": {"a": 1}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": {"ok": True}}]}}]},
        ],
        inferenceConfig={"maxTokens": 99},
        toolConfig={"tools": [{"toolSpec": {"name": "see", "inputSchema": {"json": {"type": "object"}}}}]},
    )
    conversation = CONVERSE.decode_request(loopback.received[0].body)
    assert isinstance(conversation, Conversation)
    assert conversation.system_text == "Be brief."
    assert conversation.max_output_tokens == 99
    assert [t.name for t in conversation.tools] == ["see"]
    image = conversation.messages[0].parts[1]
    assert getattr(image, "data", None) == base64.b64encode(b"\x89PNG").decode()  # boto3 base64-encodes blobs
    assert conversation.messages[2].tool_results[0].name == "see"
    assert conversation.messages[2].text == '{"ok":true}'


# -- InvokeModel ------------------------------------------------------------------------------------------

INVOKE_BODY = json.dumps(
    {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
)


@pytest.mark.parametrize("case", ALL)
def test_invoke_model(case: str, loopback: LoopbackServer, client: Any) -> None:
    body = INVOKE_ANTHROPIC.encode_response(ALL[case])
    loopback.queue(Reply(headers=JSON, body=body))
    response = client.invoke_model(modelId=MODEL, body=INVOKE_BODY)
    assert response["contentType"] == "application/json"
    assert INVOKE_ANTHROPIC.decode_response(response["body"].read()) == INVOKE_ANTHROPIC.visible(ALL[case])
    assert loopback.received[0].path.endswith("/invoke")
    assert INVOKE_ANTHROPIC.decode_request(loopback.received[0].body).max_output_tokens == 64


@pytest.mark.parametrize("case", ALL)
def test_invoke_model_with_response_stream(case: str, loopback: LoopbackServer, client: Any) -> None:
    frames = INVOKE_ANTHROPIC.encode_stream(ALL[case], delta_chars=4)
    loopback.queue(Reply(headers={**EVENTS, "x-amzn-bedrock-content-type": "application/json"}, events=frames))
    response = client.invoke_model_with_response_stream(modelId=MODEL, body=INVOKE_BODY)
    chunks = [event["chunk"]["bytes"] for event in response["body"]]
    assert [json.loads(chunk)["type"] for chunk in chunks][:1] == ["message_start"]
    rebuilt = [event_frame("chunk", {"bytes": base64.b64encode(chunk).decode()}) for chunk in chunks]  # as received
    assert INVOKE_ANTHROPIC.decode_stream(rebuilt) == INVOKE_ANTHROPIC.visible(ALL[case])
    assert loopback.received[0].path.endswith("/invoke-with-response-stream")


# -- errors ---------------------------------------------------------------------------------------------

MODELED = {kind: code for kind, (_, code) in ERRORS.items() if kind is not ErrorKind.AUTHENTICATION}


@pytest.mark.parametrize("kind", ErrorKind)
@pytest.mark.parametrize(
    "operation", ["converse", "invoke_model", "converse_stream", "invoke_model_with_response_stream"]
)
def test_error_classes(kind: ErrorKind, operation: str, loopback: LoopbackServer, client: Any) -> None:
    reply = CONVERSE.encode_error(kind, f"llmproxy says {kind}")
    loopback.queue(Reply(reply.status, reply.headers, reply.body))
    status, code = ERRORS[kind]
    expected = getattr(client.exceptions, code) if kind in MODELED else ClientError
    args = {"messages": MESSAGES} if operation.startswith("converse") else {"body": INVOKE_BODY}
    with pytest.raises(ClientError) as info:
        getattr(client, operation)(modelId=MODEL, **args)
    error = info.value
    assert type(error) is expected
    assert error.response["Error"] == {"Code": code, "Message": f"llmproxy says {kind}"}
    assert error.response["ResponseMetadata"]["HTTPStatusCode"] == status
    assert error.response["ResponseMetadata"]["RequestId"] == reply.headers["x-amzn-requestid"]
    assert CONVERSE.decode_error(status, reply.body).kind is kind


@pytest.mark.parametrize(
    ("code", "status", "kind"),
    [
        ("ModelNotReadyException", 429, ErrorKind.OVERLOADED),
        ("ModelErrorException", 424, ErrorKind.SERVER_ERROR),
        ("ServiceQuotaExceededException", 400, ErrorKind.QUOTA_EXCEEDED),
    ],
)
def test_errors_only_bedrock_sends(
    code: str, status: int, kind: ErrorKind, loopback: LoopbackServer, client: Any
) -> None:
    """Real Bedrock bodies carry only the message; the header names the error, with a suffix."""
    body = json.dumps({"message": "nope"}).encode()
    headers = {**JSON, "x-amzn-errortype": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/"}
    loopback.queue(Reply(status, headers, body))
    with pytest.raises(getattr(client.exceptions, code)):
        client.invoke_model(modelId=MODEL, body=INVOKE_BODY)
    assert CONVERSE.decode_error(status, json.dumps({"message": "nope", "__type": code}).encode()).kind is kind


PARTIAL = Completion(text="Half an ans", usage=Usage(5, 30), error=ProviderError(ErrorKind.RATE_LIMIT, "slow down"))


@pytest.mark.parametrize("kind", ErrorKind)
def test_mid_stream_failure_raises_event_stream_error(kind: ErrorKind, loopback: LoopbackServer, client: Any) -> None:
    failed = replace(PARTIAL, error=ProviderError(kind, f"failed: {kind}"))
    loopback.queue(Reply(headers=EVENTS, events=CONVERSE.encode_stream(failed, delta_chars=4)))
    text: list[str] = []
    response = client.converse_stream(modelId=MODEL, messages=MESSAGES)
    with pytest.raises(EventStreamError) as info, contextlib.closing(response["stream"]) as stream:
        text.extend(event.get("contentBlockDelta", {}).get("delta", {}).get("text", "") for event in stream)
    assert "".join(text) == "Half an ans"  # the content before the failure reached the caller
    visible = CONVERSE.visible(failed).error
    assert visible is not None
    code = info.value.response["Error"]["Code"]
    assert code[0].upper() + code[1:] == visible.type  # botocore keeps the frame's lowerCamel member name
    assert info.value.response["Error"]["Message"] == f"failed: {kind}"


def test_invoke_stream_failure_raises_event_stream_error(loopback: LoopbackServer, client: Any) -> None:
    failed = replace(PARTIAL, error=ProviderError(ErrorKind.TIMEOUT, "model timed out"))
    loopback.queue(Reply(headers=EVENTS, events=INVOKE_ANTHROPIC.encode_stream(failed)))
    response = client.invoke_model_with_response_stream(modelId=MODEL, body=INVOKE_BODY)
    seen: list[str] = []
    with pytest.raises(EventStreamError, match="modelTimeoutException"), contextlib.closing(response["body"]) as body:
        seen.extend(json.loads(event["chunk"]["bytes"])["type"] for event in body)
    assert seen[0] == "message_start"
    assert "message_stop" not in seen
