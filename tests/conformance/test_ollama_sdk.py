"""The official `ollama` SDK parses exactly what llmproxy's Ollama codecs serve, on 127.0.0.1.

Every golden case goes through `chat` and `generate`, plain and streamed (NDJSON, one chunk per line, at
several delta sizes); the SDK's objects are read back into a Completion and must equal `visible(case)`.
The SDK types tool calls without the `id` newer servers send, so ids are compared blank. Errors must raise
`ResponseError` with the status and the message, mid-stream too.
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import UTC, datetime

import ollama
import pytest

from llmproxy.framing import ndjson
from llmproxy.model import Completion, ErrorKind, ImagePart, ProviderError, Role, StopReason, ToolCall, Usage
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.ollama import CHAT, GENERATE
from llmproxy.providers.routes import detect, with_body
from tests.conformance.server import LoopbackServer, Reply
from tests.golden.cases import CASES

pytestmark = pytest.mark.conformance

MESSAGES = [{"role": "user", "content": "Hello"}]
JSON = {"content-type": "application/json; charset=utf-8"}
STREAM = {"content-type": ndjson.MEDIA_TYPE}
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@pytest.fixture
def client(loopback: LoopbackServer) -> Iterator[ollama.Client]:
    with ollama.Client(host=loopback.url) as sdk:
        yield sdk
    for received in loopback.received:
        route = detect("127.0.0.1", received.path)
        assert route is not None
        assert route.provider == "ollama"
        assert route.operation == received.path.removeprefix("/api/")
        assert with_body(route, json.loads(received.body)).streaming is json.loads(received.body)["stream"]


def seen(codec: ChatCodec, completion: Completion) -> Completion:
    """What the SDK can show of a completion: `visible`, less the tool-call ids its types drop."""
    shown = codec.visible(completion)
    return replace(shown, tool_calls=tuple(replace(call, id="") for call in shown.tool_calls))


def _created(created_at: str | None) -> int | None:
    if created_at is None:
        return None
    seconds = (datetime.fromisoformat(created_at) - EPOCH).total_seconds()
    return int(seconds) if seconds >= 0 else None


def from_sdk(parts: Iterable[ollama.ChatResponse | ollama.GenerateResponse]) -> Completion:
    """SDK objects (one body, or a stream's chunks) read back the way an SDK user reads them."""
    text: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    first = last = None
    for part in parts:
        first = first or part
        last = part
        if isinstance(part, ollama.ChatResponse):
            text.append(part.message.content or "")
            thinking.append(part.message.thinking or "")
            calls += [ToolCall("", c.function.name, dict(c.function.arguments)) for c in part.message.tool_calls or []]
        else:
            text.append(part.response or "")
            thinking.append(part.thinking or "")
    assert first is not None
    assert last is not None
    assert last.done is True
    stop = {"stop": StopReason.TOOL_USE if calls else StopReason.END_TURN, "length": StopReason.MAX_TOKENS}
    counted = last.prompt_eval_count is not None or last.eval_count is not None
    return Completion(
        model=first.model or None,
        created=_created(first.created_at),
        text="".join(text),
        tool_calls=tuple(calls),
        stop_reason=None if last.done_reason is None else stop[last.done_reason],
        reasoning="".join(thinking) or None,
        usage=Usage(last.prompt_eval_count or 0, last.eval_count or 0) if counted else None,
    )


@pytest.mark.parametrize("name", list(CASES))
def test_chat(loopback: LoopbackServer, client: ollama.Client, name: str) -> None:
    loopback.queue(Reply(headers=JSON, body=CHAT.encode_response(CASES[name])))
    response = client.chat(model="golden-model", messages=MESSAGES)
    assert from_sdk([response]) == seen(CHAT, CASES[name])
    assert response.eval_duration  # clients divide by these
    assert response.prompt_eval_duration


@pytest.mark.parametrize("delta_chars", [1, 16])
@pytest.mark.parametrize("name", list(CASES))
def test_chat_stream(loopback: LoopbackServer, client: ollama.Client, name: str, delta_chars: int) -> None:
    loopback.queue(Reply(headers=STREAM, events=CHAT.encode_stream(CASES[name], delta_chars=delta_chars)))
    chunks = list(client.chat(model="golden-model", messages=MESSAGES, stream=True))
    assert from_sdk(chunks) == seen(CHAT, CASES[name])


@pytest.mark.parametrize("name", list(CASES))
def test_generate(loopback: LoopbackServer, client: ollama.Client, name: str) -> None:
    loopback.queue(Reply(headers=JSON, body=GENERATE.encode_response(CASES[name])))
    response = client.generate(model="golden-model", prompt="Hello")
    assert from_sdk([response]) == seen(GENERATE, CASES[name])


@pytest.mark.parametrize("name", list(CASES))
def test_generate_stream(loopback: LoopbackServer, client: ollama.Client, name: str) -> None:
    loopback.queue(Reply(headers=STREAM, events=GENERATE.encode_stream(CASES[name], delta_chars=5)))
    chunks = list(client.generate(model="golden-model", prompt="Hello", stream=True))
    assert from_sdk(chunks) == seen(GENERATE, CASES[name])


def ask(
    client: ollama.Client, codec: ChatCodec, *, stream: bool
) -> list[ollama.ChatResponse | ollama.GenerateResponse]:
    """One chat or generate call, its stream read to the end."""
    if codec is CHAT:
        return (
            list(client.chat(model="golden-model", messages=MESSAGES, stream=True))
            if stream
            else [client.chat(model="golden-model", messages=MESSAGES)]
        )
    return (
        list(client.generate(model="golden-model", prompt="Hello", stream=True))
        if stream
        else [client.generate(model="golden-model", prompt="Hello")]
    )


@pytest.mark.parametrize("codec", [CHAT, GENERATE], ids=["chat", "generate"])
@pytest.mark.parametrize("kind", list(ErrorKind))
def test_errors(loopback: LoopbackServer, client: ollama.Client, codec: ChatCodec, kind: ErrorKind) -> None:
    reply = codec.encode_error(kind, f"llmproxy says {kind}")
    loopback.queue(Reply(reply.status, reply.headers, reply.body), Reply(reply.status, reply.headers, reply.body))
    for stream in (False, True):
        with pytest.raises(ollama.ResponseError) as caught:
            ask(client, codec, stream=stream)
        assert (caught.value.status_code, caught.value.error) == (reply.status, f"llmproxy says {kind}")
        assert codec.decode_error(reply.status, reply.body) == ProviderError(
            kind, caught.value.error, None, caught.value.status_code
        )


def _texts(parts: Iterable[ollama.ChatResponse | ollama.GenerateResponse]) -> Iterator[str]:
    for part in parts:
        yield (part.message.content if isinstance(part, ollama.ChatResponse) else part.response) or ""


@pytest.mark.parametrize("codec", [CHAT, GENERATE], ids=["chat", "generate"])
def test_mid_stream_error(loopback: LoopbackServer, client: ollama.Client, codec: ChatCodec) -> None:
    failed = replace(CASES["text"], error=ProviderError(ErrorKind.OVERLOADED, "server busy, please try again"))
    loopback.queue(Reply(headers=STREAM, events=codec.encode_stream(failed, delta_chars=4)))
    received: list[str] = []
    stream = (
        client.chat(model="golden-model", messages=MESSAGES, stream=True)
        if codec is CHAT
        else client.generate(model="golden-model", prompt="Hello", stream=True)
    )
    with pytest.raises(ollama.ResponseError) as caught:
        received.extend(_texts(stream))
    assert "".join(received) == failed.text
    assert (caught.value.error, caught.value.status_code) == ("server busy, please try again", -1)
    assert codec.visible(failed).error == ProviderError(ErrorKind.SERVER_ERROR, caught.value.error)


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
      city: The city name

    Returns:
      str: The weather
    """
    return city


def test_chat_request_the_sdk_sends_decodes(loopback: LoopbackServer, client: ollama.Client) -> None:
    loopback.queue(Reply(headers=JSON, body=CHAT.encode_response(CASES["text"])))
    client.chat(
        model="qwen3",
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris? Here is a map.", "images": [b"\x89PNG"]},
            {
                "role": "assistant",
                "content": "",
                "thinking": "Call the tool.",
                "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
            },
            {"role": "tool", "content": "sunny", "tool_name": "get_weather"},
        ],
        tools=[get_weather],
        think=True,
        format="json",
        options={"num_predict": 64, "temperature": 0},
    )
    conversation = CHAT.decode_request(loopback.received[0].body)
    assert conversation.model == "qwen3"
    assert [m.role for m in conversation.messages] == [Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL]
    assert conversation.messages[1].parts[1] == ImagePart(data="iVBORw==")
    assert conversation.messages[2].tool_calls == (ToolCall("", "get_weather", {"city": "Paris"}),)
    assert conversation.messages[3].tool_results[0].name == "get_weather"
    assert conversation.messages[3].text == "sunny"
    assert conversation.tools[0].name == "get_weather"
    assert conversation.tools[0].parameters is not None
    assert conversation.tools[0].parameters["required"] == ["city"]
    assert (conversation.stream, conversation.max_output_tokens, conversation.reasoning_requested) == (False, 64, True)


def test_generate_request_the_sdk_sends_decodes(loopback: LoopbackServer, client: ollama.Client) -> None:
    loopback.queue(Reply(headers=STREAM, events=GENERATE.encode_stream(CASES["text"])))
    list(client.generate(model="coder", prompt="def f(", suffix="\n", system="Code.", stream=True, think="low"))
    conversation = GENERATE.decode_request(loopback.received[0].body)
    assert (conversation.model, conversation.system_text, conversation.stream) == ("coder", "Code.", True)
    assert conversation.reasoning_requested is True
    assert conversation.messages[0].text == "def f("
