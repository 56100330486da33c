"""The bytes the benchmark sends and answers: Anthropic Messages requests, a reply, and a timed SSE stream.

Shared by the upstream and the load generator so both sides agree on the wire without parsing much of it.
"""

import json
import time

MODEL = "claude-sonnet-4-5"
# A key-shaped value, so the recorder's redaction does the work it does on real traffic.
API_KEY = "sk-ant-api03-" + "b" * 93 + "AA"


def small_request(stream: bool = False) -> bytes:
    """A ~300-byte request: one user turn."""
    body: dict[str, object] = {
        "model": MODEL,
        "max_tokens": 1024,
        "system": "You are a concise assistant.",
        "temperature": 0.7,
        "metadata": {"user_id": "bench-user-0001"},
        "messages": [
            {
                "role": "user",
                "content": "Write a haiku about proxies that record what they relay, then explain its imagery.",
            }
        ],
    }
    if stream:
        body["stream"] = True
    return json.dumps(body).encode()


def chat_request(stream: bool = False) -> bytes:
    """An OpenAI Chat Completions request of about the same size, for the mock comparison."""
    body: dict[str, object] = {
        "model": "gpt-5-mini",
        "messages": [
            {"role": "system", "content": "You are a concise assistant."},
            {"role": "user", "content": "hello: write a haiku about proxies that record what they relay."},
        ],
    }
    if stream:
        body["stream"] = True
    return json.dumps(body).encode()


def large_request(size: int = 200_000, stream: bool = False) -> bytes:
    """A request of about `size` bytes: a coding agent's long history of tool calls and file contents."""
    source = "".join(f"def function_{i}(value: int) -> int:\n    return value * {i} + {i % 7}\n\n" for i in range(40))
    messages: list[dict[str, object]] = [{"role": "user", "content": "Refactor the helpers in src/ for clarity."}]
    turn = 0
    while len(json.dumps(messages)) < size - len(source) - 600:
        call_id = f"toolu_bench_{turn:04d}"
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Reading src/module_{turn}.py to see what it does."},
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": "read_file",
                        "input": {"path": f"src/module_{turn}.py"},
                    },
                ],
            }
        )
        messages.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": source}]}
        )
        turn += 1
    messages.append({"role": "assistant", "content": "I have read every module; here is the plan."})
    messages.append({"role": "user", "content": "Go ahead."})
    body = {
        "model": MODEL,
        "max_tokens": 8192,
        "system": "You are a coding agent. Use the tools to read and edit files.",
        "tools": [
            {
                "name": "read_file",
                "description": "Read a file of the repository.",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }
        ],
        "messages": messages,
    }
    if stream:
        body["stream"] = True
    return json.dumps(body).encode()


def sized_request(size: int, stream: bool = False) -> bytes:
    """A request of about `size` bytes: one user turn padded with prose below 10 KB, an agent's history above."""
    if size >= 10_000:
        return large_request(size, stream)
    body = json.loads(small_request(stream))
    body["messages"][0]["content"] += " " + _prose(size - len(small_request()))
    return json.dumps(body).encode()


def _prose(size: int) -> str:
    """About `size` characters of an assistant's explanation, with code and numbers in it, as answers have."""
    sentence = (
        "The function at line {i} returns value * {i} + {m}; calling it with 42 gives {r}, which the test "
        "in tests/test_module_{i}.py checks before the refactor keeps it.\n"
    )
    text, length, i = [], 0, 0
    while length < size:
        text.append(sentence.format(i=i, m=i % 7, r=42 * i + i % 7))
        length += len(text[-1])
        i += 1
    return "".join(text)[: max(0, size)]


def reply(size: int = 0) -> bytes:
    """A complete, non-streamed Messages answer; with `size`, its text makes it about that many bytes."""
    text = "Bytes pass through;\nthe tape keeps every word;\nnothing waits for it."
    if size:
        text = _prose(size - 300)
    return json.dumps(
        {
            "id": "msg_bench_01",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 25, "output_tokens": 21},
        }
    ).encode()


def _event(name: str, data: dict[str, object]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def stream_head() -> bytes:
    """What the stream opens with: message_start and content_block_start."""
    message = {
        "id": "msg_bench_02",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 1},
    }
    return _event("message_start", {"type": "message_start", "message": message}) + _event(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )


def stream_delta(chars: int = 0) -> bytes:
    """One content_block_delta whose text starts with the time it was made (seconds since the epoch), so the
    client can tell how long it took to arrive; with `chars`, prose follows to make it about that long."""
    stamp = f"{time.time():.6f} "
    return text_delta(stamp + _prose(chars - len(stamp)) if chars > len(stamp) else stamp)


def text_delta(text: str) -> bytes:
    """One content_block_delta carrying `text`."""
    delta = {"type": "text_delta", "text": text}
    return _event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})


def stream_tail(deltas: int) -> bytes:
    """What the stream closes with: content_block_stop, message_delta and message_stop."""
    return (
        _event("content_block_stop", {"type": "content_block_stop", "index": 0})
        + _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": deltas},
            },
        )
        + _event("message_stop", {"type": "message_stop"})
    )


def sent_at(event: bytes) -> float | None:
    """The send time stamped into a content_block_delta by `stream_delta`, or None for other events."""
    for line in event.split(b"\n"):
        if line.startswith(b"data: ") and b"content_block_delta" in line:
            return float(json.loads(line[6:])["delta"]["text"].split(" ", 1)[0])
    return None
