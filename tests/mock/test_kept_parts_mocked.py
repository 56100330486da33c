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
from tests.mock.sdk_clients import anthropic_client, openai_client
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


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Session]:
    """A fresh mock per test: each recorded conversation answers its one turn once."""
    directory = tmp_path
    cassette = directory / "c.json"
    writer = CassetteWriter.open(cassette, Redactor())
    for item in (_anthropic_exchange(), _responses_exchange()):
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
    assert [parts["format"] for parts in kept] == ["anthropic", "openai-responses"]
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
