"""Each provider's own usage object next to the `Usage` llmproxy derives from it, so the meaning of every
number is pinned: `input_tokens` is the whole prompt (cache reads and writes, and Gemini's tool-use prompt,
included), `output_tokens` includes reasoning, `cache_read_tokens` / `cache_write_tokens` /
`reasoning_tokens` are the parts of those. Where the provider reports a total, `Usage.total_tokens` equals
it. The usage objects are in the documented shape (validated by the official SDK's type where it has one)."""

import json
from collections.abc import Callable
from typing import Any

import pytest

from llmproxy.model import Usage
from llmproxy.providers.registry import CHAT_CODECS


def _anthropic(usage: dict[str, Any]) -> dict[str, Any]:
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": []}
    return {**body, "stop_reason": "end_turn", "stop_sequence": None, "usage": usage}


def _chat(usage: dict[str, Any]) -> dict[str, Any]:
    choice = {"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice], "usage": usage}


def _responses(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "r1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "m",
        "output": [],
        "usage": usage,
    }


def _gemini(usage: dict[str, Any]) -> dict[str, Any]:
    candidate = {"content": {"role": "model", "parts": [{"text": "x"}]}, "finishReason": "STOP", "index": 0}
    return {"candidates": [candidate], "usageMetadata": usage}


def _converse(usage: dict[str, Any]) -> dict[str, Any]:
    output = {"message": {"role": "assistant", "content": [{"text": "x"}]}}
    return {"output": output, "stopReason": "end_turn", "usage": usage, "metrics": {"latencyMs": 1}}


def _cohere(usage: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "assistant", "content": [{"type": "text", "text": "x"}]}
    return {"id": "c1", "finish_reason": "COMPLETE", "message": message, "usage": usage}


def _ollama(usage: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "assistant", "content": "x"}
    return {"model": "m", "created_at": "2025-01-01T00:00:00Z", "message": message, "done": True, **usage}


def _cohere_v1(meta: dict[str, Any]) -> dict[str, Any]:
    return {"response_id": "r1", "text": "x", "generation_id": "g1", "finish_reason": "COMPLETE", "meta": meta}


def _code_assist(usage: dict[str, Any]) -> dict[str, Any]:
    return {"response": _gemini(usage), "traceId": "t1"}


def _generate(usage: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "created_at": "2025-01-01T00:00:00Z", "response": "x", "done": True, **usage}


def _sdk(module: str, name: str) -> Callable[[dict[str, Any]], object]:
    def validate(usage: dict[str, Any]) -> object:
        return getattr(pytest.importorskip(module), name).model_validate(usage)

    return validate


# (codec, body around the usage, the provider's usage object, what it means, the SDK type that checks it)
TABLE: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], dict[str, Any], Usage, Any]] = [
    (
        "anthropic-messages",
        _anthropic,
        {
            "input_tokens": 100,  # the uncached rest of the prompt only
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 200,
            "cache_creation": {"ephemeral_5m_input_tokens": 150, "ephemeral_1h_input_tokens": 50},
            "output_tokens": 300,  # thinking included
            # requests, not tokens: priced apart
            "server_tool_use": {"web_search_requests": 2, "web_fetch_requests": 0},
        },
        Usage(1300, 300, cache_read_tokens=1000, cache_write_tokens=200, cache_write_1h_tokens=50),
        _sdk("anthropic.types", "Usage"),
    ),
    (
        "openai-chat",
        _chat,
        {
            "prompt_tokens": 1300,  # cached included
            "completion_tokens": 300,  # reasoning included
            "total_tokens": 1600,
            "prompt_tokens_details": {"cached_tokens": 1000, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 120, "audio_tokens": 0},
        },
        Usage(1300, 300, cache_read_tokens=1000, reasoning_tokens=120),
        _sdk("openai.types", "CompletionUsage"),
    ),
    (
        "openai-chat",  # DeepSeek: cache hits in fields of its own
        _chat,
        {
            "prompt_tokens": 1300,
            "completion_tokens": 300,
            "total_tokens": 1600,
            "prompt_cache_hit_tokens": 1000,
            "prompt_cache_miss_tokens": 300,
        },
        Usage(1300, 300, cache_read_tokens=1000),
        None,
    ),
    (
        "openai-chat",  # xAI, Gemini's OpenAI-compatible API: reasoning outside completion_tokens, in the total
        _chat,
        {"prompt_tokens": 1300, "completion_tokens": 180, "total_tokens": 1600},
        Usage(1300, 300, reasoning_tokens=120),
        None,
    ),
    (
        "openai-responses",
        _responses,
        {
            "input_tokens": 1300,  # cached included
            "input_tokens_details": {"cached_tokens": 1000, "cache_write_tokens": 200},
            "output_tokens": 300,  # reasoning included
            "output_tokens_details": {"reasoning_tokens": 120},
            "total_tokens": 1600,
        },
        Usage(1300, 300, cache_read_tokens=1000, cache_write_tokens=200, reasoning_tokens=120),
        _sdk("openai.types.responses", "ResponseUsage"),
    ),
    (
        "gemini-generate",
        _gemini,
        {
            "promptTokenCount": 1300,  # cached included
            "cachedContentTokenCount": 1000,
            "toolUsePromptTokenCount": 40,  # what built-in tools added to the prompt: prompt too
            "candidatesTokenCount": 180,  # thoughts excluded
            "thoughtsTokenCount": 120,
            "totalTokenCount": 1640,
        },
        Usage(1340, 300, cache_read_tokens=1000, reasoning_tokens=120),
        _sdk("google.genai.types", "GenerateContentResponseUsageMetadata"),
    ),
    (
        "bedrock-converse",
        _converse,
        {
            "inputTokens": 100,  # the uncached rest, as Anthropic's
            "cacheReadInputTokens": 1000,
            "cacheWriteInputTokens": 200,
            "outputTokens": 300,
            "totalTokens": 1600,
        },
        Usage(1300, 300, cache_read_tokens=1000, cache_write_tokens=200),
        None,
    ),
    (
        "cohere-chat",
        _cohere,
        {  # billed units are what is priced; the model's own tokens include the prompt template
            "billed_units": {"input_tokens": 1300, "output_tokens": 300},
            "tokens": {"input_tokens": 1400, "output_tokens": 302},
        },
        Usage(1300, 300),
        _sdk("cohere", "Usage"),
    ),
    (
        "cohere-chat",
        _cohere,
        {  # cached_tokens are part of `tokens`, and no Cohere model prices a cache read apart: not a cache read
            "billed_units": {"input_tokens": 1300, "output_tokens": 300},
            "tokens": {"input_tokens": 1400, "output_tokens": 302},
            "cached_tokens": 1024,
        },
        Usage(1300, 300),
        _sdk("cohere", "Usage"),
    ),
    (
        "cohere-chat-v1",
        _cohere_v1,
        {  # v1 says it in `meta`: billed units again
            "api_version": {"version": "1"},
            "billed_units": {"input_tokens": 1300, "output_tokens": 300},
            "tokens": {"input_tokens": 1400, "output_tokens": 302},
        },
        Usage(1300, 300),
        _sdk("cohere", "ApiMeta"),
    ),
    (
        "bedrock-invoke-anthropic",
        _anthropic,
        {  # Anthropic's own usage object inside InvokeModel's body
            "input_tokens": 100,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 200,
            "output_tokens": 300,
        },
        Usage(1300, 300, cache_read_tokens=1000, cache_write_tokens=200),
        _sdk("anthropic.types", "Usage"),
    ),
    (
        "gemini-code-assist",
        _code_assist,
        {  # Gemini's usageMetadata inside the Code Assist envelope
            "promptTokenCount": 1200,
            "cachedContentTokenCount": 1000,
            "candidatesTokenCount": 180,
            "thoughtsTokenCount": 120,
            "totalTokenCount": 1500,
        },
        Usage(1200, 300, cache_read_tokens=1000, reasoning_tokens=120),
        _sdk("google.genai.types", "GenerateContentResponseUsageMetadata"),
    ),
    (
        "ollama-generate",
        _generate,
        {"prompt_eval_count": 1300, "eval_count": 300},  # as chat: thinking inside eval_count
        Usage(1300, 300),
        None,
    ),
    (
        "ollama-chat",
        _ollama,
        {"prompt_eval_count": 1300, "eval_count": 300},  # thinking included in eval_count
        Usage(1300, 300),
        None,
    ),
]

TOTALS = {
    "openai-chat": "total_tokens",
    "openai-responses": "total_tokens",
    "gemini-generate": "totalTokenCount",
    "gemini-code-assist": "totalTokenCount",
    "bedrock-converse": "totalTokens",  # its inputTokens leave the cache out; its total does not
}


@pytest.mark.parametrize(
    ("codec", "body", "usage", "meaning", "sdk_type"), TABLE, ids=[f"{row[0]}-{i}" for i, row in enumerate(TABLE)]
)
def test_usage_means_what_usage_says(
    codec: str, body: Callable[[dict[str, Any]], dict[str, Any]], usage: dict[str, Any], meaning: Usage, sdk_type: Any
) -> None:
    if sdk_type is not None:
        sdk_type(usage)  # the documented shape
    decoded = CHAT_CODECS[codec].decode_response(json.dumps(body(usage)).encode()).usage
    assert decoded == meaning
    if codec in TOTALS and TOTALS[codec] in usage:
        assert meaning.total_tokens == usage[TOTALS[codec]]
