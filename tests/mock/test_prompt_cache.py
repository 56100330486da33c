"""The usage a provider reports for a request, its prompt cache included: each provider's wire request
decoded by its codec, and the answer's usage encoded back in the provider's own fields, as a client reads
them. Sizes are llmproxy's estimate of the prompt, so each expectation is built from `prompt_pieces`."""

from dataclasses import replace
from itertools import accumulate
from typing import Any

import orjson
import pytest

from llmproxy.mock.prompt_cache import PromptCache
from llmproxy.mock.usage import estimate_usage, prompt_pieces, tokens
from llmproxy.model import Completion, Conversation, StopReason, ToolCall, Usage
from llmproxy.providers.registry import CHAT_CODECS

ANSWER = Completion(text="The command printed llmproxy-ok.", stop_reason=StopReason.END_TURN)
LONG = "Follow the house style for every answer; cite the file and line you rely on. " * 120  # ~2,300 tokens
TOOLS_TEXT = "Runs a shell command and returns what it printed, its exit status and how long it took. " * 60


def reported(
    cache: PromptCache, codec_name: str, body: dict[str, Any], answer: Completion = ANSWER, url_model: str = ""
) -> Any:
    """The usage object of the provider's answer to `body`, as its client reads it off the wire (`url_model`:
    the model named by the URL, where the body does not name it)."""
    codec = CHAT_CODECS[codec_name]
    conversation = codec.decode_request(orjson.dumps(body))
    conversation = replace(conversation, model=conversation.model or url_model)
    usage = cache.usage(codec.provider, conversation, answer)
    wire = orjson.loads(codec.encode_response(replace(answer, usage=usage), body))
    wire = wire.get("response", wire)  # Code Assist wraps Gemini's answer
    return wire["usageMetadata"] if "usageMetadata" in wire else wire["usage"]


def prompt_tokens(codec_name: str, body: dict[str, Any]) -> list[int]:
    """The running total of the estimated prompt, piece by piece."""
    conversation = CHAT_CODECS[codec_name].decode_request(orjson.dumps(body))
    return list(accumulate(piece.tokens for piece in prompt_pieces(conversation)))


# Anthropic: breakpoints, the minimum by model, reads on later turns, the uncached remainder


def claude_turn(model: str, *messages: dict[str, Any], system: str = LONG) -> dict[str, Any]:
    """A Claude Code-shaped request: its billing header first, the system prompt cached, the last block
    of the last message cached."""
    return {
        "model": model,
        "max_tokens": 1024,
        "system": [
            {"type": "text", "text": f"x-anthropic-billing-header: cc_version=2.1; cch={len(messages):05x};"},
            {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}},
        ],
        "tools": [{"name": "Bash", "description": TOOLS_TEXT, "input_schema": {"type": "object"}}],
        "messages": list(messages),
    }


def user(text: str, cached: bool = True) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cached:
        block["cache_control"] = {"type": "ephemeral"}
    return {"role": "user", "content": [block]}


TOOL_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"c": "ls"}}]}
TOOL_RESULT = {
    "role": "user",
    "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "README.md", "cache_control": {"type": "ephemeral"}}
    ],
}


def test_anthropic_writes_the_prefix_to_the_last_breakpoint_then_reads_it_on_the_next_turn() -> None:
    cache = PromptCache()
    first = claude_turn("claude-sonnet-4-5", user("Run ls."))
    turn1 = reported(cache, "anthropic-messages", first)
    ends = prompt_tokens("anthropic-messages", first)
    framing = 4  # what closes the last message comes after its breakpoint: never cached
    assert turn1["cache_read_input_tokens"] == 0
    assert turn1["cache_creation_input_tokens"] == ends[-1] - framing
    assert turn1["input_tokens"] == framing  # the uncached remainder, as Anthropic counts input
    assert turn1["output_tokens"] == tokens(ANSWER.text)

    # the next turn: the same prefix (its billing header changed, its breakpoint moved on), then the tool loop
    second = claude_turn("claude-sonnet-4-5", user("Run ls.", cached=False), TOOL_USE, TOOL_RESULT)
    turn2 = reported(cache, "anthropic-messages", second)
    assert turn2["cache_read_input_tokens"] == turn1["cache_creation_input_tokens"]
    total = prompt_tokens("anthropic-messages", second)[-1]
    assert turn2["cache_creation_input_tokens"] == total - framing - turn2["cache_read_input_tokens"]
    assert turn2["input_tokens"] == framing
    # the neutral usage adds the three up: the whole prompt, as llmproxy estimates it
    conversation = CHAT_CODECS["anthropic-messages"].decode_request(orjson.dumps(second))
    assert sum(turn2[key] for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")) == (
        estimate_usage(conversation, ANSWER).input_tokens
    )


def test_anthropic_caches_nothing_below_the_models_minimum() -> None:
    """About 3,700 tokens: over the 512 of Opus 5.5, the 1,024 of Sonnet 4.5 and the 2,048 of Opus 4.7, under
    the 4,096 of Haiku 4.5, Opus 4.5 and a model the documentation does not list; a prompt of about 1,300
    tokens is under Haiku 3.5's 2,048 (docs/providers.md#prompt-caching)."""
    body = claude_turn("m", user("Run ls."))
    assert 4_096 > prompt_tokens("anthropic-messages", body)[-1] > 2_048
    for model, cached in [
        ("claude-opus-5-5", True),
        ("claude-sonnet-4-5", True),
        ("claude-opus-4-1", True),
        ("claude-opus-4-7", True),
        ("claude-haiku-4-5-20251001", False),
        ("claude-opus-4-5", False),
        ("claude-opus-6", False),
    ]:
        usage = reported(PromptCache(), "anthropic-messages", body | {"model": model})
        assert (usage["cache_creation_input_tokens"] > 0) is cached, model
        assert usage["cache_read_input_tokens"] == 0
    small = claude_turn("claude-3-5-haiku-20241022", user("Run ls."), system=LONG[:2_000])
    assert 2_048 > prompt_tokens("anthropic-messages", small)[-1] > 1_024
    assert reported(PromptCache(), "anthropic-messages", small)["cache_creation_input_tokens"] == 0
    sonnet = reported(PromptCache(), "anthropic-messages", small | {"model": "claude-3-7-sonnet-latest"})
    assert sonnet["cache_creation_input_tokens"] > 0


def test_anthropic_writes_a_breakpoint_only_once_its_prefix_reaches_the_minimum() -> None:
    """Opus 5.5 caches from 512 tokens: a system prompt of about 600 is written at its own breakpoint and read
    by the next turn; one of about 300 is not (only the last breakpoint's longer prefix is)."""

    def turn(system: str, *messages: dict[str, Any]) -> dict[str, Any]:
        cached = {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
        return {"model": "claude-opus-5-5", "max_tokens": 64, "system": [cached], "messages": list(messages)}

    for system, written in ((LONG[:2_400], True), (LONG[:1_200], False)):
        system_end = prompt_tokens("anthropic-messages", turn(system))[0]
        assert (512 < system_end < 1_024) if written else (system_end < 512)
        cache = PromptCache()
        reported(cache, "anthropic-messages", turn(system, user("Run ls.")))
        again = reported(cache, "anthropic-messages", turn(system, user("Run pwd.")))
        assert again["cache_read_input_tokens"] == (system_end if written else 0)


def test_anthropic_caches_only_where_the_client_set_a_breakpoint() -> None:
    cache = PromptCache()
    body = {"model": "claude-sonnet-4-5", "max_tokens": 64, "system": LONG, "messages": [user(LONG, cached=False)]}
    for _ in range(2):
        usage = reported(cache, "anthropic-messages", body)
        assert (usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"]) == (0, 0)
        assert usage["input_tokens"] == prompt_tokens("anthropic-messages", body)[-1]


def test_anthropic_reads_nothing_once_the_prefix_changed() -> None:
    cache = PromptCache()
    reported(cache, "anthropic-messages", claude_turn("claude-sonnet-4-5", user("Run ls.")))
    changed = claude_turn("claude-sonnet-4-5", user("Run ls."), system=LONG.upper())
    usage = reported(cache, "anthropic-messages", changed)
    assert usage["cache_read_input_tokens"] == 0
    assert usage["cache_creation_input_tokens"] > 0


def test_anthropic_finds_an_earlier_write_only_within_20_blocks_of_a_breakpoint() -> None:
    cache = PromptCache()
    reported(cache, "anthropic-messages", claude_turn("claude-sonnet-4-5", user("Start.")))
    steps = [user(f"Step {n}.", cached=False) for n in range(25)]
    far = claude_turn("claude-sonnet-4-5", user("Start.", cached=False), *steps[:-1], user("Step 24."))
    read = reported(cache, "anthropic-messages", far)["cache_read_input_tokens"]
    assert read > 0  # the system prompt's own breakpoint still finds the system prompt
    near = prompt_tokens("anthropic-messages", claude_turn("claude-sonnet-4-5", user("Start.")))[-1] - 4
    assert read < near  # the first turn's last breakpoint is 25 blocks back: not found


def test_anthropic_reports_writes_that_last_an_hour_apart() -> None:
    body = claude_turn("claude-sonnet-4-5", user("Run ls."))
    body["system"][1]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    usage = reported(PromptCache(), "anthropic-messages", body)
    ends = prompt_tokens("anthropic-messages", body)
    system_end = ends[2]  # the tool, the billing header, the system prompt
    assert usage["cache_creation"] == {
        "ephemeral_5m_input_tokens": usage["cache_creation_input_tokens"] - system_end,
        "ephemeral_1h_input_tokens": system_end,
    }


# OpenAI: automatic, from 1,024 tokens, in steps of 128, input counting the cached part


def responses_turn(*items: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "gpt-5-codex",
        "instructions": LONG,
        "tools": [{"type": "function", "name": "exec_command", "description": TOOLS_TEXT, "parameters": {}}],
        "input": list(items),
    }


def test_openai_responses_reads_the_shared_prefix_in_steps_of_128_tokens() -> None:
    cache = PromptCache()
    ask = {"role": "user", "content": "Run ls."}
    first = reported(cache, "openai-responses", responses_turn(ask))
    assert first["input_tokens_details"]["cached_tokens"] == 0
    assert first["input_tokens"] == prompt_tokens("openai-responses", responses_turn(ask))[-1]
    call = {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": '{"cmd":"ls"}'}
    output = {"type": "function_call_output", "call_id": "c1", "output": "README.md"}
    second_body = responses_turn(ask, call, output)
    second = reported(cache, "openai-responses", second_body)
    shared = prompt_tokens("openai-responses", responses_turn(ask))[-1]
    cached = second["input_tokens_details"]["cached_tokens"]
    assert (cached - 1024) % 128 == 0
    assert shared - 128 < cached <= shared
    assert second["input_tokens"] == prompt_tokens("openai-responses", second_body)[-1]  # cached included
    assert second["output_tokens"] == tokens(ANSWER.text)


def test_openai_reports_the_exact_read_and_the_write_from_gpt_5_6() -> None:
    """GPT-5.6 and later: the prefix read is reported as it is, not in steps of 128, and what the request wrote
    to the cache apart (`cache_write_tokens`, within the input count)."""
    cache = PromptCache()
    ask = {"role": "user", "content": "Run ls."}
    first_body = responses_turn(ask) | {"model": "gpt-6.2-sol"}
    first = reported(cache, "openai-responses", first_body)
    whole = prompt_tokens("openai-responses", first_body)[-1]
    assert first["input_tokens_details"] == {"cached_tokens": 0, "cache_write_tokens": whole}
    call = {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": '{"cmd":"ls"}'}
    output = {"type": "function_call_output", "call_id": "c1", "output": "README.md"}
    second_body = responses_turn(ask, call, output) | {"model": "gpt-6.2-sol"}
    second = reported(cache, "openai-responses", second_body)
    total = prompt_tokens("openai-responses", second_body)[-1]
    assert second["input_tokens_details"] == {"cached_tokens": whole, "cache_write_tokens": total - whole}
    assert second["input_tokens"] == total


def test_openai_chat_caches_nothing_under_1024_tokens() -> None:
    cache = PromptCache()
    short = {
        "model": "gpt-4.1",
        "messages": [{"role": "system", "content": LONG[:3_000]}, {"role": "user", "content": "Hi"}],
    }
    assert prompt_tokens("openai-chat", short)[-1] < 1_024
    for _ in range(2):
        assert reported(cache, "openai-chat", short)["prompt_tokens_details"]["cached_tokens"] == 0
    long = {"model": "gpt-4.1", "messages": [{"role": "system", "content": LONG}, {"role": "user", "content": "Hi"}]}
    reported(cache, "openai-chat", long)
    again = reported(
        cache, "openai-chat", long | {"messages": [*long["messages"], {"role": "user", "content": "More"}]}
    )
    assert again["prompt_tokens_details"]["cached_tokens"] >= 1_024
    assert again["prompt_tokens"] > again["prompt_tokens_details"]["cached_tokens"]


def test_a_prefix_is_cached_for_its_own_model_only() -> None:
    cache = PromptCache()
    long = {"model": "gpt-4.1", "messages": [{"role": "system", "content": LONG}, {"role": "user", "content": "Hi"}]}
    reported(cache, "openai-chat", long)
    assert reported(cache, "openai-chat", long | {"model": "gpt-5"})["prompt_tokens_details"]["cached_tokens"] == 0


# Gemini: implicit caching, reported in cachedContentTokenCount and counted in promptTokenCount


def gemini_turn(*contents: dict[str, Any]) -> dict[str, Any]:
    return {
        "systemInstruction": {"parts": [{"text": LONG}]},
        "tools": [{"functionDeclarations": [{"name": "run_shell_command", "description": TOOLS_TEXT}]}],
        "contents": list(contents),
    }


ASK = {"role": "user", "parts": [{"text": "Run ls."}]}
CALL = {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}]}
RESULT = {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"output": "ok"}}}]}


@pytest.mark.parametrize("codec_name", ["gemini-generate", "gemini-code-assist"])
def test_gemini_reports_the_implicit_cache_within_the_prompt(codec_name: str) -> None:
    def body(*contents: dict[str, Any], model: str) -> dict[str, Any]:
        if codec_name == "gemini-code-assist":
            return {"model": model, "project": "p", "request": gemini_turn(*contents)}
        return gemini_turn(*contents)  # the model is in the URL

    def answer(*contents: dict[str, Any], model: str = "gemini-3-flash") -> Any:
        return reported(cache, codec_name, body(*contents, model=model), url_model=model)

    cache = PromptCache()
    first = answer(ASK)
    assert "cachedContentTokenCount" not in first  # nothing cached: the field is left out, as Gemini does
    second = answer(ASK, CALL, RESULT)
    shared = prompt_tokens(codec_name, body(ASK, model="m"))[-1]
    assert second["cachedContentTokenCount"] == shared
    assert second["promptTokenCount"] == prompt_tokens(codec_name, body(ASK, CALL, RESULT, model="m"))[-1]
    # Gemini 2.0 has no implicit caching; Gemini 2.5 Flash caches from 2,048 tokens, 3 Pro and Flash-Lite
    # from 4,096
    assert 2_048 < shared < 4_096
    for model in ("gemini-2.0-flash", "gemini-3-pro-preview", "gemini-3.1-flash-lite"):
        answer(ASK, model=model)
        assert "cachedContentTokenCount" not in answer(ASK, CALL, model=model)


def test_a_provider_without_prompt_caching_reports_the_estimate() -> None:
    cache = PromptCache()
    conversation = CHAT_CODECS["ollama-chat"].decode_request(
        orjson.dumps({"model": "llama3", "messages": [{"role": "user", "content": LONG}]})
    )
    answer = Completion(tool_calls=(ToolCall("c", "f", {"a": 1}),), stop_reason=StopReason.TOOL_USE)
    for _ in range(2):
        usage = cache.usage(CHAT_CODECS["ollama-chat"].provider, conversation, answer)
        assert usage == estimate_usage(conversation, answer)


def test_the_estimate_counts_tool_descriptions() -> None:
    """Every definition is input, its description too: Claude Code's tools are mostly descriptions."""
    bare = Conversation(model="m", messages=())
    body = {
        "model": "m",
        "max_tokens": 1,
        "messages": [],
        "tools": [{"name": "Bash", "description": TOOLS_TEXT, "input_schema": {}}],
    }
    described = CHAT_CODECS["anthropic-messages"].decode_request(orjson.dumps(body))
    assert estimate_usage(described, ANSWER).input_tokens >= tokens(TOOLS_TEXT)
    assert estimate_usage(bare, ANSWER) == Usage(input_tokens=1, output_tokens=tokens(ANSWER.text), estimated=True)
