"""Ollama bodies and NDJSON streams: what real servers send decodes, and what llmproxy sends is what they send."""

import json
from datetime import UTC, datetime

from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.base import RateLimits
from llmproxy.providers.ollama import CHAT, GENERATE
from tests.golden.cases import CASES

# As a real server streams it (one line per object; newer servers add tool-call ids, older ones do not).
SERVER_STREAM = b"".join(
    json.dumps(line).encode() + b"\n"
    for line in [
        {
            "model": "qwen3",
            "created_at": "2025-06-01T10:00:00.123456789Z",
            "message": {"role": "assistant", "content": "", "thinking": "Hmm."},
            "done": False,
        },
        {
            "model": "qwen3",
            "created_at": "2025-06-01T10:00:00.2Z",
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": "ls", "arguments": {"path": "."}}}],
            },
            "done": False,
        },
        {
            "model": "qwen3",
            "created_at": "2025-06-01T10:00:01.3+02:00",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
            "total_duration": 5,
            "load_duration": 1,
            "prompt_eval_count": 30,
            "prompt_eval_duration": 2,
            "eval_count": 12,
            "eval_duration": 2,
        },
    ]
)


def test_a_server_stream() -> None:
    assert CHAT.decode_stream([SERVER_STREAM]) == Completion(
        model="qwen3",
        created=1_748_772_000,
        tool_calls=(ToolCall("", "ls", {"path": "."}),),
        stop_reason=StopReason.TOOL_USE,
        reasoning="Hmm.",
        usage=Usage(input_tokens=30, output_tokens=12),
    )


def test_a_server_generate_body() -> None:
    body = {
        "model": "llama3.2",
        "created_at": "2025-06-01T10:00:00Z",
        "response": "Rayleigh.",
        "done": True,
        "done_reason": "length",
        "context": [1, 2],
        "prompt_eval_count": 26,
        "eval_count": 3,
    }
    assert GENERATE.decode_response(json.dumps(body).encode()) == Completion(
        model="llama3.2",
        created=1_748_772_000,
        text="Rayleigh.",
        stop_reason=StopReason.MAX_TOKENS,
        usage=Usage(26, 3),
    )


def test_stream_lines_end_with_the_done_object() -> None:
    lines = [json.loads(line) for line in CHAT.encode_stream(CASES["parallel_tools"], delta_chars=8)]
    assert all(not line["done"] for line in lines[:-1])
    assert lines[-1]["done"] is True
    assert lines[-1]["done_reason"] == "stop"
    assert (lines[-1]["prompt_eval_count"], lines[-1]["eval_count"]) == (55, 31)
    assert lines[-1]["eval_duration"] > 0
    assert lines[-1]["prompt_eval_duration"] > 0
    (calls,) = [line["message"]["tool_calls"] for line in lines if "tool_calls" in line["message"]]
    assert calls[1] == {
        "id": "call_gold_b",
        "function": {"name": "get_weather", "arguments": {"city": "Tōkyō", "days": [1, 2]}},
    }


def test_a_mid_stream_error_is_the_last_line() -> None:
    failed = Completion(model="m", text="Partial", error=ProviderError(ErrorKind.OVERLOADED, "server busy"))
    lines = CHAT.encode_stream(failed)
    assert json.loads(lines[-1]) == {"error": "server busy"}
    assert CHAT.decode_stream(lines) == Completion(
        model="m", text="Partial", stop_reason=None, error=ProviderError(ErrorKind.SERVER_ERROR, "server busy")
    )


def test_arguments_that_are_not_an_object_cannot_travel() -> None:
    bad = Completion(tool_calls=(ToolCall("c", "f", invalid_arguments='{"a": '),))
    assert CHAT.visible(bad).tool_calls == (ToolCall("c", "f", {}),)
    assert json.loads(CHAT.encode_response(bad))["message"]["tool_calls"][0]["function"]["arguments"] == {}


def test_unknown_identity_uses_go_zero_time() -> None:
    body = json.loads(GENERATE.encode_response(Completion(created=None), {"model": "asked"}))
    assert (body["model"], body["created_at"]) == ("asked", "0001-01-01T00:00:00Z")
    assert GENERATE.decode_response(json.dumps(body).encode()).created is None


def test_error_bodies_carry_the_message_and_the_status_the_kind() -> None:
    reply = CHAT.encode_error(ErrorKind.NOT_FOUND, 'model "x" not found, try pulling it first')
    assert (reply.status, json.loads(reply.body)) == (404, {"error": 'model "x" not found, try pulling it first'})
    assert CHAT.decode_error(502, b"<html>bad gateway</html>") == ProviderError(
        ErrorKind.SERVER_ERROR, "<html>bad gateway</html>", None, 502
    )


def test_ollama_sends_no_rate_limit_headers() -> None:
    limits = RateLimits(requests_limit=10, requests_remaining=0, retry_after=3)
    assert CHAT.rate_limit_headers(limits, datetime(2026, 1, 1, tzinfo=UTC)) == {}
