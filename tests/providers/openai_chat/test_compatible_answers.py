"""Answers of OpenAI-compatible servers, in the shapes their docs give: reasoning beside the content, Mistral's
list of content parts, DeepSeek's cache counters, reasoning left out of `completion_tokens`, and OpenRouter's
error chunk that ends a stream carrying its usage. None of them is an error to decode."""

import json

from llmproxy.model import ErrorKind, StopReason, Usage
from llmproxy.providers.openai_chat import CHAT


def answer(message: dict[str, object], usage: dict[str, object] | None = None) -> bytes:
    body: dict[str, object] = {
        "id": "x-1",
        "object": "chat.completion",
        "created": 1_780_000_000,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
    }
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body).encode()


def sse(*chunks: dict[str, object], done: bool = True) -> list[bytes]:
    events = [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks]
    return [*events, b"data: [DONE]\n\n"] if done else events


def chunk(delta: dict[str, object], finish: str | None = None, **extra: object) -> dict[str, object]:
    base = {"id": "x-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def test_mistral_content_parts_with_thinking() -> None:
    """Magistral: `content` is a list; a thinking part holds its own list of text parts."""
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "Cross at the light."}], "closed": True}
    completion = CHAT.decode_response(answer({"content": [thinking, {"type": "text", "text": "Use a crossing."}]}))
    assert (completion.text, completion.reasoning) == ("Use a crossing.", "Cross at the light.")


def test_mistral_streamed_content_parts() -> None:
    part = {"type": "thinking", "thinking": [{"type": "text", "text": "Hmm. "}]}
    chunks = sse(
        chunk({"role": "assistant", "content": [part]}),
        chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Yes."}]}]}),
        chunk({"content": "Answer"}),
        chunk({}, "stop"),
    )
    completion = CHAT.decode_stream(chunks)
    assert (completion.text, completion.reasoning, completion.stop_reason) == (
        "Answer",
        "Hmm. Yes.",
        StopReason.END_TURN,
    )


def test_deepseek_reasoning_content_and_cache_counters() -> None:
    """DeepSeek: `reasoning_content` beside the content; cache hits as `prompt_cache_hit_tokens` (older answers
    have no `prompt_tokens_details`)."""
    usage = {
        "prompt_tokens": 563,
        "completion_tokens": 116,
        "total_tokens": 679,
        "prompt_cache_hit_tokens": 512,
        "prompt_cache_miss_tokens": 51,
        "completion_tokens_details": {"reasoning_tokens": 60},
    }
    completion = CHAT.decode_response(answer({"content": "Paris.", "reasoning_content": "The capital..."}, usage))
    assert completion.reasoning == "The capital..."
    assert completion.usage == Usage(563, 116, cache_read_tokens=512, reasoning_tokens=60)


def test_openrouter_reasoning_and_its_details() -> None:
    details = [
        {"type": "reasoning.summary", "summary": "Thinking about Venus", "format": "openai-responses-v1", "index": 0},
        {"type": "reasoning.encrypted", "data": "gAAAAB-opaque", "format": "openai-responses-v1", "index": 1},
    ]
    both = CHAT.decode_response(
        answer({"content": "Hot.", "reasoning": "Thinking about Venus", "reasoning_details": details})
    )
    assert (both.reasoning, both.reasoning_signature) == ("Thinking about Venus", "gAAAAB-opaque")
    only_details = CHAT.decode_response(answer({"content": "Hot.", "reasoning_details": details}))
    assert only_details.reasoning == "Thinking about Venus"


def test_streamed_reasoning_fields() -> None:
    chunks = sse(
        chunk({"role": "assistant", "reasoning": "a "}),
        chunk({"reasoning_content": "b"}),
        chunk({"content": "c", "reasoning": None}),
        chunk({}, "stop"),
    )
    completion = CHAT.decode_stream(chunks)
    assert (completion.text, completion.reasoning) == ("c", "a b")


def test_reasoning_left_out_of_completion_tokens_is_output() -> None:
    """xAI counts reasoning apart from `completion_tokens`; Gemini's OpenAI-compatible API does not report it at
    all. `total_tokens` holds it in both: the output the usage means includes it."""
    xai = {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 45,
        "completion_tokens_details": {"reasoning_tokens": 30},
    }
    assert CHAT.decode_response(answer({"content": "ok"}, xai)).usage == Usage(10, 35, reasoning_tokens=30)
    gemini = {"prompt_tokens": 35, "completion_tokens": 12, "total_tokens": 109}
    assert CHAT.decode_response(answer({"content": "ok"}, gemini)).usage == Usage(35, 74, reasoning_tokens=62)
    openai = {
        "prompt_tokens": 10,
        "completion_tokens": 35,
        "total_tokens": 45,
        "completion_tokens_details": {"reasoning_tokens": 30},
    }
    assert CHAT.decode_response(answer({"content": "ok"}, openai)).usage == Usage(10, 35, reasoning_tokens=30)


def test_openrouter_error_chunk_ends_the_stream_with_its_usage() -> None:
    error = {"code": 400, "message": "Token limit reached"}
    usage = {"prompt_tokens": 43, "completion_tokens": 10, "total_tokens": 53, "cost": 0}
    chunks = sse(
        chunk({"role": "assistant", "content": "Par"}),
        chunk({"role": "assistant", "content": ""}, error=error, usage=usage, provider="Minimax"),
        done=False,
    )
    completion = CHAT.decode_stream(chunks)
    assert completion.text == "Par"
    assert completion.usage == Usage(43, 10)
    assert completion.error is not None
    assert (completion.error.kind, completion.error.message) == (ErrorKind.INVALID_REQUEST, "Token limit reached")


def test_counts_written_as_floats() -> None:
    usage = {"prompt_tokens": 12.0, "completion_tokens": 3.0, "total_tokens": 15.0}
    assert CHAT.decode_response(answer({"content": "ok"}, usage)).usage == Usage(12, 3)
