"""Structured output and the adversarial catalog as the official SDKs receive them through `llmproxy mock`:
a text that misses its schema is flagged with a header and a warning, or refused with a provider-correct 502
when enforced; every catalog answer arrives as written, in Anthropic's and OpenAI's formats, streamed or not."""

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from llmproxy.mock.adversarial import CATALOG
from llmproxy.mock.reply import STRUCTURED_OUTPUT_HEADER
from llmproxy.mock.spec import Adversarial
from llmproxy.session import Session
from tests.mock.sdk_clients import anthropic_client, openai_client, serving

SCHEMA = {"type": "object", "required": ["city", "celsius"], "properties": {"celsius": {"type": "number"}}}
EXPECTATIONS: dict[str, Any] = {
    "expectations": [
        {
            "match": {"latestMessageContains": "weather ok"},
            "respond": {"text": '{"city": "Paris", "celsius": 21}', "outputSchema": SCHEMA},
        },
        {
            "match": {"latestMessageContains": "weather flagged"},
            "respond": {"text": '{"city": "Paris", "celsius": "warm"}', "outputSchema": json.dumps(SCHEMA)},
        },
        {
            "match": {"latestMessageContains": "weather enforced"},
            "respond": {"text": '{"town": "Paris"}', "outputSchema": SCHEMA, "enforceOutputSchema": True},
        },
        *({"match": {"latestMessageContains": f"catalog {kind}"}, "adversarial": kind} for kind in Adversarial),
    ]
}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, EXPECTATIONS)


@pytest.fixture(scope="module")
def claude(proxy: Session) -> Iterator[Any]:
    with anthropic_client(proxy) as client:
        yield client


@pytest.fixture(scope="module")
def gpt(proxy: Session) -> Iterator[Any]:
    with openai_client(proxy) as client:
        yield client


def messages(words: str) -> dict[str, Any]:
    return {"model": "claude-haiku-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": words}]}


def chat_streamed(gpt: Any, words: str) -> tuple[str, list[tuple[str, Any]], str | None]:
    """Text, tool calls and finish reason put together from the raw chunks (the SDK's stream helper refuses a
    completion cut at its length limit, which one catalog answer is)."""
    text, arguments, names, finish = "", {}, {}, None
    for chunk in gpt.chat.completions.create(
        model="gpt-5-mini", messages=[{"role": "user", "content": words}], stream=True
    ):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or []:
                names[call.index] = names.get(call.index) or call.function.name
                arguments[call.index] = arguments.get(call.index, "") + (call.function.arguments or "")
            finish = choice.finish_reason or finish
    return text, [(names[i], json.loads(arguments[i])) for i in sorted(names)], finish


def test_a_conforming_text_passes_unflagged(claude: Any) -> None:
    raw = claude.messages.with_raw_response.create(**messages("weather ok"))
    assert STRUCTURED_OUTPUT_HEADER not in raw.headers
    assert json.loads(raw.parse().content[0].text) == {"city": "Paris", "celsius": 21}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_text_that_misses_its_schema_is_flagged_and_still_served(
    claude: Any, proxy: Session, caplog: pytest.LogCaptureFixture, stream: bool
) -> None:
    caplog.set_level(logging.WARNING)
    raw = claude.messages.with_raw_response.create(**messages("weather flagged"), stream=stream)
    assert raw.headers[STRUCTURED_OUTPUT_HEADER] == "$.celsius: 'warm' is not of type 'number'"
    answer = raw.parse()
    text = (
        "".join(e.delta.text for e in answer if e.type == "content_block_delta") if stream else answer.content[0].text
    )
    assert text == '{"city": "Paris", "celsius": "warm"}'
    assert "structured output invalid: $.celsius: 'warm' is not of type 'number'" in caplog.text
    assert proxy.mock_log is not None
    assert proxy.mock_log.entries[-1]["notes"][-1].startswith("structured output invalid")


def test_an_enforced_schema_turns_the_answer_into_a_502(claude: Any, gpt: Any) -> None:
    import anthropic
    import openai

    with pytest.raises(anthropic.InternalServerError) as refused:
        claude.messages.create(**messages("weather enforced"))
    assert refused.value.status_code == 502
    assert refused.value.body["error"]["type"] == "api_error"
    assert "structured output does not match the schema: $: 'city' is a required property" in str(refused.value)
    with pytest.raises(openai.InternalServerError) as refused_too:
        gpt.chat.completions.create(model="gpt-5-mini", messages=[{"role": "user", "content": "weather enforced"}])
    assert refused_too.value.status_code == 502
    assert "'city' is a required property" in str(refused_too.value)


@pytest.mark.parametrize("kind", list(Adversarial))
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_every_catalog_answer_arrives_as_written(claude: Any, gpt: Any, kind: Adversarial, stream: bool) -> None:
    expected = CATALOG[kind]
    asked = f"catalog {kind.value}"
    if stream:
        with claude.messages.stream(**messages(asked)) as events:
            answer = events.get_final_message()
        chat_text, chat_calls, finish = chat_streamed(gpt, asked)
    else:
        answer = claude.messages.create(**messages(asked))
        chat = gpt.chat.completions.create(model="gpt-5-mini", messages=[{"role": "user", "content": asked}]).choices[0]
        chat_text, finish = chat.message.content or "", chat.finish_reason
        chat_calls = [
            (call.function.name, json.loads(call.function.arguments)) for call in chat.message.tool_calls or []
        ]

    assert "".join(block.text for block in answer.content if block.type == "text") == chat_text == expected.text
    calls = [(block.name, block.input) for block in answer.content if block.type == "tool_use"]
    assert calls == chat_calls == [(call.name, call.arguments) for call in expected.toolCalls]
    stop = {Adversarial.OVERLONG_REPETITION: ("max_tokens", "length")}
    default = ("tool_use", "tool_calls") if expected.toolCalls else ("end_turn", "stop")
    assert (answer.stop_reason, finish) == stop.get(kind, default)
