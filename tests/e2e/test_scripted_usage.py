"""The stand-in upstream the CLI tests and the example cassettes are recorded against answers with the usage
the provider would report, read by the official SDKs: the input from the request's size, the output from the
answer's, and the provider's prompt caching — Anthropic at the client's breakpoints, OpenAI and Gemini by
themselves — so a session's second call reads what its first one cached."""

from collections.abc import Iterator
from typing import Any

import pytest

from llmproxy.mock.usage import tokens
from llmproxy.model import Completion, StopReason, Usage
from tests.e2e.clis import ScriptedServer

SYSTEM = "You review pull requests for a payments service; name the file and line of each finding. " * 100
ANSWER = "Looks good: one nit in README.md, line 3."


@pytest.fixture
def upstream() -> Iterator[ScriptedServer]:
    server = ScriptedServer([Completion(text=ANSWER, stop_reason=StopReason.END_TURN)] * 2)
    yield server
    server.close()


def test_anthropic_reads_on_the_second_call_what_the_first_wrote(upstream: ScriptedServer) -> None:
    import anthropic

    def ask(*messages: dict[str, Any]) -> Any:
        system = [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
        with claude.messages.stream(model="claude-sonnet-5-5", max_tokens=256, system=system, messages=messages) as s:
            return s.get_final_message().usage

    with anthropic.Anthropic(api_key="sk-ant-test", base_url=upstream.url, max_retries=0) as claude:
        first = ask({"role": "user", "content": "Review it."})
        second = ask(
            {"role": "user", "content": "Review it."},
            {"role": "assistant", "content": ANSWER},
            {"role": "user", "content": "And the tests?"},
        )
    system_tokens = tokens(SYSTEM)
    assert (first.cache_read_input_tokens, first.cache_creation_input_tokens) == (0, system_tokens)
    assert first.input_tokens == tokens("Review it.") + 4  # the rest, after the breakpoint: the question
    assert first.output_tokens == tokens(ANSWER)
    assert (second.cache_read_input_tokens, second.cache_creation_input_tokens) == (system_tokens, 0)
    assert second.input_tokens == sum(tokens(text) + 4 for text in ("Review it.", ANSWER, "And the tests?"))


def test_a_declared_usage_is_answered_as_declared() -> None:
    import anthropic

    server = ScriptedServer([Completion(text=ANSWER, usage=Usage(input_tokens=7, output_tokens=3))])
    try:
        with anthropic.Anthropic(api_key="sk-ant-test", base_url=server.url, max_retries=0) as claude:
            usage = claude.messages.create(
                model="claude-sonnet-5-5", max_tokens=64, messages=[{"role": "user", "content": SYSTEM}]
            ).usage
    finally:
        server.close()
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens) == (7, 3, 0)


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_caches_the_shared_prefix_by_itself_in_steps_of_128(upstream: ScriptedServer, api: str) -> None:
    import openai

    def ask(question: str) -> tuple[int, int, int]:
        if api == "chat":
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
            chat = client.chat.completions.create(model="gpt-4.1", messages=messages)  # type: ignore[arg-type]
            assert chat.usage is not None
            assert chat.usage.prompt_tokens_details is not None
            details = chat.usage.prompt_tokens_details
            return chat.usage.prompt_tokens, details.cached_tokens or 0, chat.usage.completion_tokens
        response = client.responses.create(model="gpt-5", instructions=SYSTEM, input=question)
        assert response.usage is not None
        usage = response.usage
        return usage.input_tokens, usage.input_tokens_details.cached_tokens, usage.output_tokens

    with openai.OpenAI(api_key="sk-test", base_url=f"{upstream.url}/v1", max_retries=0) as client:
        first_input, first_cached, output = ask("Review it.")
        second_input, second_cached, _ = ask("Review the tests.")
    assert first_cached == 0
    assert first_input == tokens(SYSTEM) + tokens("Review it.") + 4 + (4 if api == "chat" else 0)
    assert output == tokens(ANSWER)
    shared = tokens(SYSTEM) + (4 if api == "chat" else 0)  # Chat frames the system prompt as a message
    assert second_cached == 1024 + (shared - 1024) // 128 * 128  # whole steps of 128 tokens
    assert second_input > second_cached  # the input counts the cached part too


def test_openai_reports_the_exact_read_and_the_write_from_gpt_5_6(upstream: ScriptedServer) -> None:
    """GPT-5.6 and later (docs/providers.md#prompt-caching): the prefix read as it is, and what each request
    wrote to the cache, as the SDK reads them."""
    import openai

    with openai.OpenAI(api_key="sk-test", base_url=f"{upstream.url}/v1", max_retries=0) as client:
        first, second = (
            client.responses.create(model="gpt-6.2-sol", instructions=SYSTEM, input=question).usage
            for question in ("Review it.", "Review the tests.")
        )
    assert first is not None
    assert second is not None
    assert (first.input_tokens_details.cached_tokens, first.input_tokens_details.cache_write_tokens) == (
        0,
        first.input_tokens,
    )
    assert second.input_tokens_details.cached_tokens == tokens(SYSTEM)  # exact: not rounded to 128
    assert second.input_tokens_details.cache_write_tokens == second.input_tokens - tokens(SYSTEM)


def test_gemini_reports_its_implicit_cache_within_the_prompt(upstream: ScriptedServer) -> None:
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    options = types.HttpOptions(base_url=upstream.url)
    client = genai.Client(api_key="gemini-test", http_options=options)
    try:
        config = types.GenerateContentConfig(system_instruction=SYSTEM)
        first = client.models.generate_content(model="gemini-3-flash", contents="Review it.", config=config)
        second = client.models.generate_content(model="gemini-3-flash", contents="Review the tests.", config=config)
    finally:
        client.close()
    assert first.usage_metadata is not None
    assert second.usage_metadata is not None
    assert first.usage_metadata.cached_content_token_count is None
    assert second.usage_metadata.cached_content_token_count == tokens(SYSTEM)
    assert second.usage_metadata.prompt_token_count == tokens(SYSTEM) + tokens("Review the tests.") + 4
