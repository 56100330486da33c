"""The official openai SDK's Azure clients parse what llmproxy serves for Azure OpenAI, on 127.0.0.1.

`AzureOpenAI` (deployment paths with `api-version`, `api-key` auth) and the plain `OpenAI` client on Azure's
`/openai/v1/` base URL. Bodies and streams are OpenAI's (the readers are the OpenAI conformance tests'), so
these tests prove the paths the SDK builds detect as Azure, and that Azure's own error bodies raise the
SDK's classes with Azure's codes.
"""

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from llmproxy.model import ErrorKind, Operation, Provider, Route
from llmproxy.providers import azure
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect
from tests.conformance.server import LoopbackServer, Received, Reply
from tests.conformance.test_openai_chat_sdk import SDK_ERRORS, from_chunks, from_sdk
from tests.conformance.test_openai_responses_sdk import sdk_completion
from tests.golden.cases import CASES

pytestmark = pytest.mark.conformance

API_VERSION = "2024-10-21"
AZURE_HOST = "my-resource.openai.azure.com"
MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]
JSON = {"content-type": "application/json"}
SSE = {"content-type": "text/event-stream"}


@pytest.fixture
def client(loopback: LoopbackServer) -> Iterator[openai.AzureOpenAI]:
    with openai.AzureOpenAI(
        azure_endpoint=loopback.url, api_key="azure-key", api_version=API_VERSION, max_retries=0
    ) as sdk:
        yield sdk
    for received in loopback.received:
        assert received.headers["api-key"] == "azure-key"
        assert received.path.endswith(f"?api-version={API_VERSION}")


@pytest.fixture
def v1_client(loopback: LoopbackServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(api_key="azure-key", base_url=loopback.url + "/openai/v1/", max_retries=0) as sdk:
        yield sdk


def route_of(received: Received, host: str = "127.0.0.1") -> Route | None:
    return detect(host, received.path, received.headers, method=received.method)


@pytest.mark.parametrize("name", list(CASES))
def test_chat(loopback: LoopbackServer, client: openai.AzureOpenAI, name: str) -> None:
    loopback.queue(Reply(headers=JSON, body=azure.CHAT.encode_response(CASES[name])))
    completion = client.chat.completions.create(model="gpt-4o-deploy", messages=MESSAGES)
    assert from_sdk(completion) == azure.CHAT.visible(CASES[name])
    (received,) = loopback.received
    assert received.path.startswith("/openai/deployments/gpt-4o-deploy/chat/completions?")
    expected = Route(Provider.AZURE, Operation.CHAT_COMPLETIONS, None, "gpt-4o-deploy")
    assert route_of(received) == route_of(received, AZURE_HOST) == expected
    assert chat_codec(expected) is azure.CHAT


@pytest.mark.parametrize("name", list(CASES))
def test_chat_stream(loopback: LoopbackServer, client: openai.AzureOpenAI, name: str) -> None:
    request = {"stream": True, "stream_options": {"include_usage": True}}
    loopback.queue(Reply(headers=SSE, events=azure.CHAT.encode_stream(CASES[name], request, delta_chars=5)))
    with client.chat.completions.create(model="gpt-4o-deploy", messages=MESSAGES, **request) as stream:
        chunks = list(stream)
    assert from_chunks(chunks) == azure.CHAT.visible(CASES[name])
    assert azure.CHAT.decode_request(loopback.received[0].body).stream is True


@pytest.mark.parametrize("name", ["text", "parallel_tools", "reasoning"])
def test_responses(loopback: LoopbackServer, client: openai.AzureOpenAI, name: str) -> None:
    loopback.queue(
        Reply(headers=JSON, body=azure.RESPONSES.encode_response(CASES[name])),
        Reply(headers=SSE, events=azure.RESPONSES.encode_stream(CASES[name], delta_chars=5)),
    )
    response = client.responses.create(model="gpt-4o-deploy", input="hi")
    with client.responses.stream(model="gpt-4o-deploy", input="hi") as stream:
        final = stream.get_final_response()
    assert sdk_completion(response) == sdk_completion(final) == azure.RESPONSES.visible(CASES[name])
    for received in loopback.received:
        assert received.path.startswith("/openai/responses?")  # no deployment segment
        assert route_of(received) == Route(Provider.AZURE, Operation.RESPONSES)


@pytest.mark.parametrize("kind", list(ErrorKind))
def test_error_classes(loopback: LoopbackServer, client: openai.AzureOpenAI, kind: ErrorKind) -> None:
    reply = azure.CHAT.encode_error(kind, f"llmproxy says {kind}")
    loopback.queue(Reply(reply.status, reply.headers, reply.body))
    with pytest.raises(SDK_ERRORS[kind]) as caught:
        client.chat.completions.create(model="gpt-4o-deploy", messages=MESSAGES)
    error = caught.value
    assert type(error) is SDK_ERRORS[kind]
    assert error.status_code == reply.status
    assert f"llmproxy says {kind}" in error.message
    assert error.code == json.loads(reply.body)["error"]["code"]
    assert error.request_id == reply.headers["apim-request-id"]
    assert azure.CHAT.decode_error(reply.status, reply.body).kind is kind


def test_content_filter_error(loopback: LoopbackServer, client: openai.AzureOpenAI) -> None:
    reply = azure.errors.content_filter_error("The prompt was filtered.", ("hate",))
    loopback.queue(Reply(reply.status, reply.headers, reply.body))
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-4o-deploy", messages=MESSAGES)
    assert (caught.value.code, caught.value.param) == ("content_filter", "prompt")
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["innererror"]["content_filter_result"]["hate"] == {"filtered": True, "severity": "high"}


def test_retries_honour_retry_after(loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("openai._base_client.time.sleep", slept.append)
    limited = azure.CHAT.encode_error(ErrorKind.RATE_LIMIT, "Please retry after 1 second.", retry_after=0.05)
    loopback.queue(
        Reply(limited.status, limited.headers, limited.body),
        Reply(headers=JSON, body=azure.CHAT.encode_response(CASES["text"])),
    )
    with openai.AzureOpenAI(
        azure_endpoint=loopback.url, api_key="azure-key", api_version=API_VERSION, max_retries=1
    ) as sdk:
        completion = sdk.chat.completions.create(model="gpt-4o-deploy", messages=MESSAGES)
    assert from_sdk(completion) == azure.CHAT.visible(CASES["text"])
    assert slept == [0.05]
    assert [r.headers.get("x-stainless-retry-count") for r in loopback.received] == ["0", "1"]


def test_embedding_paths_detect_as_azure(loopback: LoopbackServer, client: openai.AzureOpenAI) -> None:
    reply = azure.errors.encode_error(ErrorKind.NOT_FOUND, "no such deployment")
    loopback.queue(Reply(reply.status, reply.headers, reply.body))
    with pytest.raises(openai.NotFoundError):
        client.embeddings.create(model="emb-deploy", input="hi")
    (received,) = loopback.received
    assert route_of(received) == Route(Provider.AZURE, Operation.EMBEDDINGS, False, "emb-deploy")


@pytest.mark.parametrize("name", ["text", "parallel_tools"])
def test_v1_chat_and_responses(loopback: LoopbackServer, v1_client: openai.OpenAI, name: str) -> None:
    loopback.queue(
        Reply(headers=JSON, body=azure.CHAT.encode_response(CASES[name])),
        Reply(headers=SSE, events=azure.CHAT.encode_stream(CASES[name], {"stream": True})),
        Reply(headers=JSON, body=azure.RESPONSES.encode_response(CASES[name])),
    )
    assert from_sdk(v1_client.chat.completions.create(model="dep", messages=MESSAGES)) == azure.CHAT.visible(
        CASES[name]
    )
    with v1_client.chat.completions.create(model="dep", messages=MESSAGES, stream=True) as stream:
        assert from_chunks(list(stream)).text == CASES[name].text
    response = v1_client.responses.create(model="dep", input="hi")
    assert sdk_completion(response) == azure.RESPONSES.visible(CASES[name])
    chat, streamed, responses = loopback.received
    assert chat.path == streamed.path == "/openai/v1/chat/completions"
    assert responses.path == "/openai/v1/responses"
    assert route_of(chat, AZURE_HOST) == Route(Provider.AZURE, Operation.CHAT_COMPLETIONS)
    assert route_of(responses, AZURE_HOST) == Route(Provider.AZURE, Operation.RESPONSES)
    # the plain client sends a Bearer key: on a host that is not Azure's, the path is OpenAI's
    assert route_of(chat) == Route(Provider.OPENAI, Operation.CHAT_COMPLETIONS)


def test_v1_errors(loopback: LoopbackServer, v1_client: openai.OpenAI) -> None:
    reply = azure.CHAT.encode_error(ErrorKind.NOT_FOUND, "The API deployment for this resource does not exist.")
    loopback.queue(Reply(reply.status, reply.headers, reply.body))
    with pytest.raises(openai.NotFoundError) as caught:
        v1_client.chat.completions.create(model="missing", messages=MESSAGES)
    assert caught.value.code == "DeploymentNotFound"
