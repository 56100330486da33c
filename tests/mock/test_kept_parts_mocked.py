"""An answer holding what a Completion's fields cannot say (server tool use, search results, citations, MCP,
compaction), recorded, turned into expectations by `cassette to-expectations`, and served again by the mock
to the official SDKs: the blocks and items come back as they were recorded, in a body and in a stream."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.mock.from_cassette import dumps, to_expectations
from llmproxy.session import Listening, Session, mocking
from tests.cassette.factory import exchange, request, response
from tests.mock.sdk_clients import anthropic_client, bedrock_client, openai_client
from tests.providers.test_kept_message_parts import CHAT_ANNOTATIONS, CHAT_AUDIO, CONVERSE_CONTENT
from tests.providers.test_kept_parts import ANTHROPIC_CONTENT, RESPONSES_OUTPUT, USAGE

QUESTION = "What does llmproxy do?"


def _anthropic_exchange() -> Any:
    asked = {"model": "claude-x", "max_tokens": 100, "messages": [{"role": "user", "content": QUESTION}]}
    answer = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": ANTHROPIC_CONTENT,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": USAGE,
    }
    return exchange(request(asked), response(orjson.dumps(answer)))


def _responses_exchange() -> Any:
    asked = {"model": "gpt-5", "input": QUESTION}
    answer = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1700000000,
        "status": "completed",
        "model": "gpt-5",
        "output": RESPONSES_OUTPUT,
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
    }
    return exchange(request(asked, host="api.openai.com", path="/v1/responses"), response(orjson.dumps(answer)))


CHAT_MESSAGE = {
    "role": "assistant",
    "content": "It records traffic.",
    "refusal": None,
    "annotations": CHAT_ANNOTATIONS,
    "audio": CHAT_AUDIO,
}
CONVERSE_MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"


def _chat_exchange() -> Any:
    asked = {"model": "gpt-4o-search-preview", "messages": [{"role": "user", "content": QUESTION}]}
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-4o-search-preview",
        "choices": [{"index": 0, "message": CHAT_MESSAGE, "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    path = "/v1/chat/completions"
    return exchange(request(asked, host="api.openai.com", path=path), response(orjson.dumps(answer)))


def _converse_exchange() -> Any:
    asked = {"messages": [{"role": "user", "content": [{"text": QUESTION}]}]}
    answer = {
        "output": {"message": {"role": "assistant", "content": CONVERSE_CONTENT}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 120},
    }
    path = f"/model/{CONVERSE_MODEL.replace(':', '%3A')}/converse"  # as botocore sends it
    host = "bedrock-runtime.us-east-1.amazonaws.com"
    return exchange(request(asked, host=host, path=path), response(orjson.dumps(answer)))


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Session]:
    """A fresh mock per test: each recorded conversation answers its one turn once."""
    directory = tmp_path
    cassette = directory / "c.json"
    writer = CassetteWriter.open(cassette, Redactor())
    for item in (_anthropic_exchange(), _responses_exchange(), _chat_exchange(), _converse_exchange()):
        writer.add(item)
    writer.close()
    expectations = directory / "expectations.json"
    expectations.write_bytes(dumps(to_expectations(load_cassette(cassette))))
    with mocking(expectations, Listening(ca_directory=directory / "ca")) as session:
        yield session


def test_the_expectation_keeps_the_parts(proxy: Session) -> None:
    assert proxy.plan.mock is not None
    written = json.loads(Path(proxy.plan.mock.expectations).read_text())
    kept = [turn["respond"]["parts"] for entry in written["expectations"] for turn in entry["conversation"]["turns"]]
    assert [parts["format"] for parts in kept] == ["anthropic", "openai-responses", "openai-chat", "bedrock-converse"]
    assert kept[0]["parts"] == ANTHROPIC_CONTENT


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_anthropic_answer_served_as_recorded(proxy: Session, stream: bool) -> None:
    with anthropic_client(proxy) as claude:
        asked = {"model": "claude-x", "max_tokens": 100, "messages": [{"role": "user", "content": QUESTION}]}
        if stream:
            with claude.beta.messages.stream(**asked) as events:
                message = events.get_final_message()
        else:
            message = claude.beta.messages.create(**asked)
    assert message.model_dump(mode="json", exclude_unset=True)["content"] == ANTHROPIC_CONTENT


def test_responses_answer_served_as_recorded(proxy: Session) -> None:
    with openai_client(proxy) as client:
        answer = client.responses.create(model="gpt-5", input=QUESTION)
    output = [item.model_dump(mode="json", exclude_unset=True) for item in answer.output]
    assert output[1:8] == RESPONSES_OUTPUT[1:8]  # kept whole; the reasoning, message and call are rebuilt
    assert answer.output_text == "It records traffic."


def test_chat_answer_served_as_recorded(proxy: Session) -> None:
    with openai_client(proxy) as client:
        asked = [{"role": "user", "content": QUESTION}]
        answer = client.chat.completions.create(model="gpt-4o-search-preview", messages=asked)
    message = answer.choices[0].message.model_dump(mode="json", exclude_unset=True)
    assert {key: message[key] for key in CHAT_MESSAGE} == CHAT_MESSAGE


def test_converse_answer_served_as_recorded(proxy: Session) -> None:
    with bedrock_client(proxy) as bedrock:
        asked = [{"role": "user", "content": [{"text": QUESTION}]}]
        answer = bedrock.converse(modelId=CONVERSE_MODEL, messages=asked)
    content = answer["output"]["message"]["content"]
    content[1]["reasoningContent"]["redactedContent"] = CONVERSE_CONTENT[1]["reasoningContent"]["redactedContent"]
    assert content[1:] == CONVERSE_CONTENT[1:]  # botocore reads the redacted blob as bytes; base64 again here
