"""The official SDKs against `llmproxy mock`, through the proxy on 127.0.0.1: text, tool calls, reasoning,
usage, errors and failover (the SDK's own retries get through two 503s), streaming and not.

One expectations file serves every SDK: each scenario is picked by a word in the prompt ("scenario:tools"),
failover per provider so each SDK meets its own failures.
"""

import json
from collections.abc import Iterator
from typing import Any

import pytest

from llmproxy.session import Session
from tests.mock.sdk_clients import anthropic_client, azure_client, bedrock_client, openai_client, serving, trusting

SIGNATURE = "c2lnbmVkIGJ5IGxsbXByb3h5"  # base64: Gemini's thought signatures are bytes
FAILOVER_PROVIDERS = ("anthropic", "openai", "gemini", "bedrock", "ollama", "cohere")

EXPECTATIONS: dict[str, Any] = {
    "expectations": [
        {"match": {"latestMessageContains": "scenario:text"}, "respond": {"text": "Paris is the capital of France."}},
        {
            "match": {"latestMessageContains": "scenario:tools"},
            "respond": {
                "text": "Let me look.",
                "toolCalls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_weather_1"}],
            },
        },
        {
            "match": {"latestMessageContains": "scenario:reasoning"},
            "respond": {"text": "42", "reasoningText": "Six times seven.", "reasoningSignature": SIGNATURE},
        },
        {
            "match": {"latestMessageContains": "scenario:usage"},
            "respond": {
                "text": "counted",
                "usage": {"inputTokens": 100, "outputTokens": 20, "cachedInputTokens": 60, "reasoningTokens": 5},
            },
        },
        {"match": {"latestMessageContains": "scenario:error"}, "error": {"status": 400, "message": "bad prompt"}},
        *(
            {
                "match": {"latestMessageContains": "scenario:failover", "provider": provider},
                "failover": {"failWith": [503, 503], "retryAfter": 0, "then": {"text": "recovered"}},
            }
            for provider in FAILOVER_PROVIDERS
        ),
    ]
}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, EXPECTATIONS)


def served(proxy: Session, word: str) -> list[dict[str, Any]]:
    assert proxy.mock_log is not None
    return [entry for entry in proxy.mock_log.entries if word in entry.get("latestText", "")]


# Anthropic


@pytest.fixture(scope="module")
def claude(proxy: Session) -> Iterator[Any]:
    with anthropic_client(proxy, retries=2) as client:
        yield client


def ask_claude(claude: Any, word: str, *, stream: bool) -> Any:
    request = {"model": "claude-haiku-4-5", "max_tokens": 256, "messages": [{"role": "user", "content": word}]}
    if not stream:
        return claude.messages.create(**request)
    with claude.messages.stream(**request) as events:
        return events.get_final_message()


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_anthropic(claude: Any, stream: bool) -> None:
    import anthropic

    text = ask_claude(claude, "scenario:text", stream=stream)
    assert [block.text for block in text.content] == ["Paris is the capital of France."]
    assert text.stop_reason == "end_turn"
    assert text.usage.input_tokens > 0
    assert text.usage.output_tokens > 0

    tools = ask_claude(claude, "scenario:tools", stream=stream)
    assert tools.stop_reason == "tool_use"
    assert [block.type for block in tools.content] == ["text", "tool_use"]
    call = tools.content[1]
    assert (call.id, call.name, call.input) == ("call_weather_1", "get_weather", {"city": "Paris"})

    thought = ask_claude(claude, "scenario:reasoning", stream=stream)
    assert [block.type for block in thought.content] == ["thinking", "text"]
    assert (thought.content[0].thinking, thought.content[0].signature) == ("Six times seven.", SIGNATURE)

    usage = ask_claude(claude, "scenario:usage", stream=stream).usage  # as given, each in Anthropic's own field
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (100, 60, 20)

    with pytest.raises(anthropic.BadRequestError, match="bad prompt"):
        ask_claude(claude, "scenario:error", stream=stream)


def test_anthropic_retries_through_failover(claude: Any, proxy: Session) -> None:
    answer = ask_claude(claude, "scenario:failover anthropic", stream=False)
    assert answer.content[0].text == "recovered"
    assert [entry["status"] for entry in served(proxy, "failover anthropic")] == [503, 503, 200]


# OpenAI: Chat Completions and Responses


@pytest.fixture(scope="module")
def gpt(proxy: Session) -> Iterator[Any]:
    with openai_client(proxy, retries=2) as client:
        yield client


def chat(gpt: Any, word: str, *, stream: bool) -> tuple[str, list[Any], str | None, Any]:
    """Text, tool calls, finish reason and usage of one chat completion."""
    messages = [{"role": "user", "content": word}]
    if not stream:
        done = gpt.chat.completions.create(model="gpt-5-mini", messages=messages)
        choice = done.choices[0]
        return choice.message.content or "", list(choice.message.tool_calls or []), choice.finish_reason, done.usage
    with gpt.chat.completions.stream(
        model="gpt-5-mini", messages=messages, stream_options={"include_usage": True}
    ) as events:
        final = events.get_final_completion()
    choice = final.choices[0]
    return choice.message.content or "", list(choice.message.tool_calls or []), choice.finish_reason, final.usage


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_openai_chat(gpt: Any, stream: bool) -> None:
    import openai

    text, calls, finish, usage = chat(gpt, "scenario:text", stream=stream)
    assert (text, calls, finish) == ("Paris is the capital of France.", [], "stop")
    assert usage.prompt_tokens > 0

    text, calls, finish, _ = chat(gpt, "scenario:tools", stream=stream)
    assert (text, finish) == ("Let me look.", "tool_calls")
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("call_weather_1", "get_weather", {"city": "Paris"})
    ]

    text, _, _, _ = chat(gpt, "scenario:reasoning", stream=stream)
    assert text == "42"  # Chat Completions carries no reasoning

    _, _, _, usage = chat(gpt, "scenario:usage", stream=stream)
    assert (usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens, usage.completion_tokens) == (100, 60, 20)
    assert usage.completion_tokens_details.reasoning_tokens == 5

    with pytest.raises(openai.BadRequestError, match="bad prompt"):
        chat(gpt, "scenario:error", stream=stream)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_openai_responses(gpt: Any, stream: bool) -> None:
    def respond(word: str) -> Any:
        if not stream:
            return gpt.responses.create(model="gpt-5-mini", input=word)
        with gpt.responses.stream(model="gpt-5-mini", input=word) as events:
            return events.get_final_response()

    assert respond("scenario:text").output_text == "Paris is the capital of France."
    tools = respond("scenario:tools")
    calls = [item for item in tools.output if item.type == "function_call"]
    assert [(c.call_id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("call_weather_1", "get_weather", {"city": "Paris"})
    ]
    thought = respond("scenario:reasoning")
    assert [item.type for item in thought.output] == ["reasoning", "message"]
    assert thought.output[0].summary[0].text == "Six times seven."
    usage = respond("scenario:usage").usage
    assert (usage.input_tokens, usage.input_tokens_details.cached_tokens, usage.output_tokens) == (100, 60, 20)


def test_openai_retries_through_failover(gpt: Any, proxy: Session) -> None:
    text, _, _, _ = chat(gpt, "scenario:failover openai", stream=False)
    assert text == "recovered"
    assert [entry["status"] for entry in served(proxy, "failover openai")] == [503, 503, 200]


def test_the_log_names_what_answered(proxy: Session, claude: Any) -> None:
    ask_claude(claude, "scenario:tools (logged)", stream=False)
    (entry,) = served(proxy, "(logged)")
    assert entry["answeredBy"] == "expectation 2"
    assert entry["provider"] == "anthropic"
    assert entry["toolCalls"] == [{"name": "get_weather", "arguments": {"city": "Paris"}}]


# Gemini (google-genai installs on Python 3.13+ only: see pyproject.toml)


@pytest.fixture(scope="module")
def gemini(proxy: Session) -> Iterator[Any]:
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    retry = types.HttpRetryOptions(attempts=3, initial_delay=0.001, max_delay=0.002, jitter=0)
    options = types.HttpOptions(client_args={"proxy": proxy.url, "verify": trusting(proxy)}, retry_options=retry)
    client = genai.Client(api_key="gemini-test", http_options=options)
    yield client
    client.close()


def ask_gemini(gemini: Any, word: str, *, stream: bool) -> tuple[str, list[Any], list[str], Any]:
    """Visible text, function calls, thought texts and the last usage metadata."""
    if stream:
        chunks = list(gemini.models.generate_content_stream(model="gemini-2.5-flash", contents=word))
    else:
        chunks = [gemini.models.generate_content(model="gemini-2.5-flash", contents=word)]
    parts = [part for chunk in chunks for part in chunk.candidates[0].content.parts or []]
    text = "".join(part.text for part in parts if part.text and not part.thought)
    thoughts = [part.text for part in parts if part.thought]
    calls = [part.function_call for part in parts if part.function_call]
    return text, calls, thoughts, chunks[-1].usage_metadata


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_gemini(gemini: Any, stream: bool) -> None:
    errors = pytest.importorskip("google.genai.errors")
    assert ask_gemini(gemini, "scenario:text", stream=stream)[0] == "Paris is the capital of France."
    text, calls, _, _ = ask_gemini(gemini, "scenario:tools", stream=stream)
    assert text == "Let me look."
    assert [(call.name, call.args) for call in calls] == [("get_weather", {"city": "Paris"})]
    text, _, thoughts, _ = ask_gemini(gemini, "scenario:reasoning", stream=stream)
    assert (text, thoughts) == ("42", ["Six times seven."])
    usage = ask_gemini(gemini, "scenario:usage", stream=stream)[3]
    assert (usage.prompt_token_count, usage.cached_content_token_count) == (100, 60)
    assert (usage.candidates_token_count, usage.thoughts_token_count) == (15, 5)  # Gemini counts thoughts apart
    with pytest.raises(errors.ClientError, match="bad prompt"):
        ask_gemini(gemini, "scenario:error", stream=stream)


def test_gemini_retries_through_failover(gemini: Any, proxy: Session) -> None:
    assert ask_gemini(gemini, "scenario:failover gemini", stream=False)[0] == "recovered"
    assert [entry["status"] for entry in served(proxy, "failover gemini")] == [503, 503, 200]


# Bedrock (boto3 Converse)


@pytest.fixture(scope="module")
def bedrock(proxy: Session) -> Iterator[Any]:
    with bedrock_client(proxy, attempts=3) as client:
        yield client


def converse(bedrock: Any, word: str, *, stream: bool) -> tuple[str, list[dict[str, Any]], str, dict[str, Any]]:
    """Text, tool uses, stop reason and usage of one Converse call."""
    messages = [{"role": "user", "content": [{"text": word}]}]
    model = "anthropic.claude-haiku-4-5-v1:0"
    if not stream:
        done = bedrock.converse(modelId=model, messages=messages)
        blocks = done["output"]["message"]["content"]
        text = "".join(block.get("text", "") for block in blocks)
        return text, [block["toolUse"] for block in blocks if "toolUse" in block], done["stopReason"], done["usage"]
    text, tools, stop, usage = "", [], "", {}
    current: dict[str, Any] | None = None
    for event in bedrock.converse_stream(modelId=model, messages=messages)["stream"]:
        if "contentBlockStart" in event and "toolUse" in event["contentBlockStart"]["start"]:
            current = {**event["contentBlockStart"]["start"]["toolUse"], "input": ""}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]["delta"]
            text += delta.get("text", "")
            if current is not None and "toolUse" in delta:
                current["input"] += delta["toolUse"]["input"]
        elif "contentBlockStop" in event and current is not None:
            tools.append({**current, "input": json.loads(current["input"])})
            current = None
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            usage = event["metadata"]["usage"]
    return text, tools, stop, usage


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_bedrock_converse(bedrock: Any, stream: bool) -> None:
    text, tools, stop, usage = converse(bedrock, "scenario:text", stream=stream)
    assert (text, tools, stop) == ("Paris is the capital of France.", [], "end_turn")
    assert usage["inputTokens"] > 0
    text, tools, stop, _ = converse(bedrock, "scenario:tools", stream=stream)
    assert (text, stop) == ("Let me look.", "tool_use")
    assert [(t["toolUseId"], t["name"], t["input"]) for t in tools] == [
        ("call_weather_1", "get_weather", {"city": "Paris"})
    ]
    _, _, _, usage = converse(bedrock, "scenario:usage", stream=stream)
    assert (usage["inputTokens"], usage["cacheReadInputTokens"], usage["outputTokens"]) == (100, 60, 20)
    with pytest.raises(bedrock.exceptions.ValidationException, match="bad prompt"):
        converse(bedrock, "scenario:error", stream=stream)


def test_bedrock_retries_through_failover(bedrock: Any, proxy: Session) -> None:
    assert converse(bedrock, "scenario:failover bedrock", stream=False)[0] == "recovered"
    assert [entry["status"] for entry in served(proxy, "failover bedrock")] == [503, 503, 200]


# Ollama (its SDK does not retry: the failures reach the caller, then the answer)


@pytest.fixture(scope="module")
def llama(proxy: Session) -> Iterator[Any]:
    import ollama

    with ollama.Client(host="http://127.0.0.1:11434", proxy=proxy.url) as client:
        yield client


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_ollama(llama: Any, stream: bool) -> None:
    import ollama

    def ask(word: str) -> tuple[str, list[Any], str]:
        messages = [{"role": "user", "content": word}]
        if not stream:
            done = llama.chat(model="llama3.2", messages=messages)
            return done.message.content or "", list(done.message.tool_calls or []), done.message.thinking or ""
        text, calls, thinking = "", [], ""
        for chunk in llama.chat(model="llama3.2", messages=messages, stream=True):
            text += chunk.message.content or ""
            thinking += chunk.message.thinking or ""
            calls += list(chunk.message.tool_calls or [])
        return text, calls, thinking

    assert ask("scenario:text") == ("Paris is the capital of France.", [], "")
    text, calls, _ = ask("scenario:tools")
    assert text == "Let me look."
    assert [(call.function.name, dict(call.function.arguments)) for call in calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    text, _, thinking = ask("scenario:reasoning")
    assert (text, thinking) == ("42", "Six times seven.")
    with pytest.raises(ollama.ResponseError, match="bad prompt"):
        ask("scenario:error")


def test_ollama_failover(llama: Any) -> None:
    import ollama

    messages = [{"role": "user", "content": "scenario:failover ollama"}]
    for _ in range(2):
        with pytest.raises(ollama.ResponseError) as failure:
            llama.chat(model="llama3.2", messages=messages)
        assert failure.value.status_code == 503
    assert llama.chat(model="llama3.2", messages=messages).message.content == "recovered"


# Azure OpenAI


def test_azure_chat(proxy: Session) -> None:
    with azure_client(proxy) as azure:
        tools = [{"role": "user", "content": "scenario:tools"}]
        done = azure.chat.completions.create(model="gpt-4o-deploy", messages=tools)
        call = done.choices[0].message.tool_calls[0]
        assert (done.choices[0].message.content, call.function.name) == ("Let me look.", "get_weather")
        text = [{"role": "user", "content": "scenario:text"}]
        chunks = azure.chat.completions.create(model="gpt-4o-deploy", messages=text, stream=True)
        assert (
            "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Paris is the capital of France."
        )


def test_base_url_clients_are_answered_on_the_relay_alike(proxy: Session) -> None:
    """A client set by base URL reaches the mock without the proxy: the same answers, streamed or not, and the
    same request log."""
    import anthropic
    import openai

    assert proxy.base_url.startswith("http://127.0.0.1:")
    with anthropic.Anthropic(api_key="k", base_url=proxy.base_url, max_retries=0) as claude:
        answer = ask_claude(claude, "scenario:tools (direct)", stream=True)
        assert [block.type for block in answer.content] == ["text", "tool_use"]
        with pytest.raises(anthropic.BadRequestError, match="bad prompt"):
            ask_claude(claude, "scenario:error (direct)", stream=False)
    with openai.OpenAI(api_key="k", base_url=f"{proxy.base_url}/v1", max_retries=0) as gpt:
        assert chat(gpt, "scenario:text (direct)", stream=False)[0] == "Paris is the capital of France."
        with pytest.raises(openai.APIStatusError) as missed:
            chat(gpt, "nothing matches this (direct)", stream=False)
        assert missed.value.status_code == 400
        assert "no expectation matched" in str(missed.value)
    logged = served(proxy, "(direct)")
    assert [entry.get("answeredBy") for entry in logged] == ["expectation 2", "expectation 5", "expectation 1", None]


# Cohere (chat v2, and v1 as `Client.chat` still sends it)


@pytest.fixture(scope="module")
def command(proxy: Session) -> Iterator[Any]:
    import cohere
    import httpx

    with httpx.Client(proxy=proxy.url, verify=trusting(proxy)) as http:
        yield cohere.ClientV2(api_key="co-test", httpx_client=http), cohere.Client(api_key="co-test", httpx_client=http)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_cohere(command: Any, stream: bool) -> None:
    import cohere

    v2, _ = command

    def ask(word: str) -> tuple[str, list[tuple[str, str]], str, Any]:
        """Text, tool calls (name, arguments), the tool plan and the billed units."""
        messages: Any = [{"role": "user", "content": word}]
        if not stream:
            done = v2.chat(model="command-a-03-2025", messages=messages)
            text = "".join(item.text for item in done.message.content or [] if item.type == "text")
            calls = [(c.function.name, c.function.arguments) for c in done.message.tool_calls or []]
            return text, calls, done.message.tool_plan or "", done.usage.billed_units
        text, calls, plan, units = "", [], "", None
        for event in v2.chat_stream(model="command-a-03-2025", messages=messages):
            if event.type == "content-delta":
                text += event.delta.message.content.text or ""
            elif event.type == "tool-call-start":
                calls.append([event.delta.message.tool_calls.function.name, ""])
            elif event.type == "tool-call-delta":
                calls[-1][1] += event.delta.message.tool_calls.function.arguments
            elif event.type == "tool-plan-delta":
                plan += event.delta.message.tool_plan
            elif event.type == "message-end":
                units = event.delta.usage.billed_units
        return text, [tuple(call) for call in calls], plan, units

    assert ask("scenario:text")[0] == "Paris is the capital of France."
    text, calls, _, _ = ask("scenario:tools")
    assert (text, calls) == ("Let me look.", [("get_weather", '{"city":"Paris"}')])
    units = ask("scenario:usage")[3]
    assert (units.input_tokens, units.output_tokens) == (100, 20)
    with pytest.raises(cohere.BadRequestError):
        ask("scenario:error")


def test_cohere_v1_and_failover(command: Any, proxy: Session) -> None:
    _, v1 = command
    assert v1.chat(model="command-r-plus", message="scenario:text").text == "Paris is the capital of France."
    done = v1.chat(model="command-r-plus", message="scenario:failover cohere")
    assert done.text == "recovered"  # the SDK's own retries got through the two 503s
    assert [entry["status"] for entry in served(proxy, "failover cohere")] == [503, 503, 200]
