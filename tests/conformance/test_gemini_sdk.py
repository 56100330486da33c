"""The official `google-genai` SDK parses exactly what llmproxy's Gemini codec serves.

Each Completion is encoded by llmproxy, served from a loopback server, read by the SDK (Gemini Developer API
and Vertex AI clients), converted back into a Completion by `sdk_completion` (written from the SDK's types,
not from the codec) and compared with `GENERATE.visible(case)`. The requests the SDK sent are decoded too.
"""

import base64
from collections.abc import Iterable, Iterator
from dataclasses import replace

import pytest

pytest.importorskip("google.genai", reason="google-genai >= 3.4 cannot install beside mitmproxy 12.2 on Python 3.12")

from google import genai
from google.genai import errors, types
from google.oauth2.credentials import Credentials

from llmproxy.model import Completion, ErrorKind, ProviderError, Role, StopReason, ToolCall, Usage
from llmproxy.providers.gemini import GENERATE, decode_count_tokens_request, encode_count_tokens_response
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect
from tests.conformance.server import LoopbackServer, Reply
from tests.golden.cases import CASES

pytestmark = pytest.mark.conformance

MODEL = "gemini-2.5-flash"
# Gemini-only shapes on top of the shared golden cases (signatures are base64: the SDK decodes them to bytes).
EXTRA: dict[str, Completion] = {
    "safety": Completion(
        id="resp_safety",
        model="gemini-x",
        text="I can't help with",
        stop_reason=StopReason.CONTENT_FILTER,
        usage=Usage(input_tokens=9, output_tokens=4),
    ),
    "thoughts_and_parallel_calls": Completion(
        id="resp_think_tools",
        model="gemini-x",
        reasoning="Two lookups, in parallel.",
        reasoning_signature="c2lnbmF0dXJl",
        tool_calls=(
            ToolCall("fc_1", "get_weather", {"city": "Paris"}),
            ToolCall("fc_2", "get_time", {"zone": "Asia/Tokyo", "nested": {"a": [1, None, True]}}),
        ),
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(input_tokens=4096, output_tokens=300, cache_read_tokens=2048, reasoning_tokens=250),
    ),
    "calls_without_ids": Completion(
        tool_calls=(ToolCall("", "noop", {}),),
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(input_tokens=3, output_tokens=1),
    ),
    "signature_alone": Completion(model="gemini-x", reasoning_signature="b3BhcXVl", stop_reason=StopReason.MAX_TOKENS),
}
ALL = {**CASES, **EXTRA}
SSE = {"content-type": "text/event-stream"}
JSON = {"content-type": "application/json; charset=UTF-8"}
CONFIG = types.GenerateContentConfig(
    max_output_tokens=256, thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=1024)
)
FINISH = {"STOP": StopReason.END_TURN, "MAX_TOKENS": StopReason.MAX_TOKENS, "SAFETY": StopReason.CONTENT_FILTER}


def _client(url: str, *, vertex: bool = False, retry: types.HttpRetryOptions | None = None) -> genai.Client:
    options = types.HttpOptions(base_url=url, retry_options=retry)
    if vertex:
        credentials = Credentials(token="test-token")  # type: ignore[no-untyped-call]  # a token that never expires
        return genai.Client(
            vertexai=True, project="test-project", location="us-central1", credentials=credentials, http_options=options
        )
    return genai.Client(api_key="test-key", http_options=options)


@pytest.fixture(params=["developer", "vertex"])
def client(request: pytest.FixtureRequest, loopback: LoopbackServer) -> Iterator[genai.Client]:
    with _client(loopback.url, vertex=request.param == "vertex") as sdk:
        yield sdk


def sdk_completion(responses: Iterable[types.GenerateContentResponse]) -> Completion:
    """What an SDK user sees over one response or a stream's chunks, as a Completion."""
    text: list[str] = []
    reasoning: list[str] = []
    signature: bytes | None = None
    calls: list[ToolCall] = []
    ident = model = finish = None
    usage: Usage | None = None
    for response in responses:
        ident, model = ident or response.response_id, model or response.model_version
        metadata = response.usage_metadata
        if metadata is not None:
            thoughts = metadata.thoughts_token_count or 0
            usage = Usage(
                input_tokens=metadata.prompt_token_count or 0,
                output_tokens=(metadata.candidates_token_count or 0) + thoughts,
                cache_read_tokens=metadata.cached_content_token_count or 0,
                reasoning_tokens=thoughts,
            )
            assert metadata.total_token_count == usage.total_tokens
        candidate = (response.candidates or [None])[0]
        if candidate is None:
            continue
        finish = candidate.finish_reason or finish
        for part in (candidate.content.parts if candidate.content else None) or []:
            signature = signature or part.thought_signature
            if part.thought:
                reasoning.append(part.text or "")
            elif part.text is not None:
                text.append(part.text)
            elif part.function_call is not None:
                call = part.function_call
                calls.append(ToolCall(call.id or "", call.name or "", call.args or {}))
    stop = None if finish is None else FINISH[finish.value]
    return Completion(
        id=ident,
        model=model or None,
        text="".join(text),
        tool_calls=tuple(calls),
        stop_reason=StopReason.TOOL_USE if calls and stop is StopReason.END_TURN else stop,
        reasoning="".join(reasoning) or None,
        reasoning_signature=base64.b64encode(signature).decode() if signature else None,
        usage=usage,
    )


def _check_request(loopback: LoopbackServer, method: str, *, vertex: bool) -> None:
    """The SDK called the route llmproxy detects, and its body decodes."""
    received = loopback.received[-1]
    if vertex:
        assert received.path.startswith("/v1beta1/projects/test-project/locations/us-central1/publishers/google/")
    route = detect("generativelanguage.googleapis.com", received.path)
    assert route is not None
    assert (route.model, route.streaming) == (MODEL, method == "streamGenerateContent")
    assert received.path.split("?")[0].endswith(f":{method}")
    codec = chat_codec(route)
    assert codec is GENERATE
    conversation = codec.decode_request(received.body)
    assert conversation.messages[0].role is Role.USER
    assert conversation.messages[0].text == "hi"
    assert (conversation.max_output_tokens, conversation.reasoning_requested) == (256, True)


def expected(case: str) -> Completion:
    """What the SDK should see: the case as the wire carries it, the request's model filling a missing one."""
    completion = ALL[case]
    return replace(GENERATE.visible(completion), model=completion.model or MODEL)


def _vertex(client: genai.Client) -> bool:
    return bool(client.vertexai)


@pytest.mark.parametrize("case", ALL)
def test_generate_content(case: str, loopback: LoopbackServer, client: genai.Client) -> None:
    loopback.queue(Reply(headers=JSON, body=GENERATE.encode_response(ALL[case], {"model": MODEL})))
    response = client.models.generate_content(model=MODEL, contents="hi", config=CONFIG)
    assert sdk_completion([response]) == expected(case)
    _check_request(loopback, "generateContent", vertex=_vertex(client))


@pytest.mark.parametrize("case", ALL)
@pytest.mark.parametrize("delta_chars", [1, 16])
def test_generate_content_stream(case: str, delta_chars: int, loopback: LoopbackServer, client: genai.Client) -> None:
    events = GENERATE.encode_stream(ALL[case], {"model": MODEL}, delta_chars=delta_chars)
    loopback.queue(Reply(headers=SSE, events=events))
    chunks = list(client.models.generate_content_stream(model=MODEL, contents="hi", config=CONFIG))
    assert len(chunks) == len(events)
    assert sdk_completion(chunks) == expected(case)
    _check_request(loopback, "streamGenerateContent", vertex=_vertex(client))
    assert loopback.received[-1].path.endswith("?alt=sse")


def test_count_tokens(loopback: LoopbackServer, client: genai.Client) -> None:
    loopback.queue(Reply(headers=JSON, body=encode_count_tokens_response(42, cached_tokens=7)))
    result = client.models.count_tokens(model=MODEL, contents="hi")
    assert result.total_tokens == 42
    # Vertex's CountTokensResponse has no cached count (it reports billable characters): its SDK drops it.
    assert result.cached_content_token_count == (None if _vertex(client) else 7)
    received = loopback.received[-1]
    route = detect("generativelanguage.googleapis.com", received.path)
    assert route is not None
    assert (route.provider, route.operation, route.model) == ("gemini", "count_tokens", MODEL)
    assert decode_count_tokens_request(received.body).messages[0].text == "hi"


ERROR_CLASSES = {kind: errors.ServerError if GENERATE.encode_error(kind, "").status >= 500 else errors.ClientError
                 for kind in ErrorKind}  # fmt: skip


@pytest.mark.parametrize("kind", ErrorKind)
def test_error_classes(kind: ErrorKind, loopback: LoopbackServer, client: genai.Client) -> None:
    reply = GENERATE.encode_error(kind, f"llmproxy says {kind}", retry_after=7)
    loopback.queue(Reply(reply.status, reply.headers, reply.body))
    with pytest.raises(errors.APIError) as info:
        client.models.generate_content(model=MODEL, contents="hi")
    error = info.value
    assert type(error) is ERROR_CLASSES[kind]
    decoded = GENERATE.decode_error(reply.status, reply.body)
    assert (error.code, error.status, error.message) == (reply.status, decoded.type, f"llmproxy says {kind}")
    assert decoded.kind is kind
    assert error.details["error"]["details"][-1] == {  # type: ignore[index]
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "7s",
    }


def test_retry_options_retry_a_rate_limit(loopback: LoopbackServer) -> None:
    """google-genai retries only when asked to (HttpRetryOptions); it then retries 429 with its own backoff."""
    limited = GENERATE.encode_error(ErrorKind.RATE_LIMIT, "slow down", retry_after=0.01)
    loopback.queue(
        *[Reply(limited.status, limited.headers, limited.body)] * 2,
        Reply(headers=JSON, body=GENERATE.encode_response(CASES["text"])),
    )
    retry = types.HttpRetryOptions(attempts=3, initial_delay=0.001, max_delay=0.002, jitter=0)
    with _client(loopback.url, retry=retry) as sdk:
        response = sdk.models.generate_content(model=MODEL, contents="hi")
    assert sdk_completion([response]) == GENERATE.visible(CASES["text"])
    assert len(loopback.received) == 3


PARTIAL = Completion(
    id="resp_cut",
    model="gemini-x",
    text="Half an ans",
    usage=Usage(input_tokens=5, output_tokens=30),
    error=ProviderError(ErrorKind.OVERLOADED, "The model is overloaded. Please try again later."),
)


def test_mid_stream_error(loopback: LoopbackServer, client: genai.Client) -> None:
    loopback.queue(Reply(headers=SSE, events=GENERATE.encode_stream(PARTIAL, delta_chars=4)))
    chunks: list[types.GenerateContentResponse] = []
    with pytest.raises(errors.ServerError) as info:
        chunks.extend(client.models.generate_content_stream(model=MODEL, contents="hi"))
    assert "".join(chunk.text or "" for chunk in chunks) == "Half an ans"  # content before the error arrived
    assert (info.value.code, info.value.status) == (503, "UNAVAILABLE")
    assert info.value.message == PARTIAL.error.message  # type: ignore[union-attr]
    assert replace(sdk_completion(chunks), usage=None) == replace(GENERATE.visible(PARTIAL), error=None)
