"""How much the codecs cost on top of parsing JSON, measured in one process (ratios, not seconds).

    .venv/bin/python scripts/bench/codecs.py

* request decoding: a real Claude Code / Codex request (tests/fixtures/captured) → Conversation, against
  `orjson.loads` of the same bytes (the floor any decoder pays);
* stream decoding: a long streamed answer → Completion, against SSE framing plus `orjson.loads` of every
  event (the floor for reading a stream at all);
* stream encoding: a Completion → wire events, against `orjson.dumps` of the same number of events.

Prints one line per codec and measurement with the median ratio over several rounds.
"""

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from llmproxy.framing.sse import decode_all  # noqa: E402
from llmproxy.model import Completion, StopReason, ToolCall, Usage  # noqa: E402
from llmproxy.providers.base import ChatCodec  # noqa: E402
from llmproxy.providers.registry import CHAT_CODECS  # noqa: E402

CAPTURED = ROOT / "tests" / "fixtures" / "captured"
REQUESTS = {
    "anthropic-messages": CAPTURED / "claude-2.1.197-turn2.json",
    "openai-responses": CAPTURED / "codex-0.169.0-turn2.json",
}
LONG = Completion(
    id="bench_1",
    model="bench-model",
    created=1,
    text="word " * 4000,
    tool_calls=(ToolCall("call_1", "write_file", {"path": "a.py", "content": "x = 1\n" * 500}),),
    stop_reason=StopReason.TOOL_USE,
    usage=Usage(input_tokens=50_000, output_tokens=6_000, cache_read_tokens=40_000),
)


def per_call(fn: Callable[[], object], seconds: float = 0.3) -> float:
    """Seconds per call: run `fn` repeatedly for about `seconds`."""
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        fn()
        calls += 1
    return elapsed / calls


def ratio(subject: Callable[[], object], baseline: Callable[[], object], rounds: int = 5) -> float:
    return statistics.median(per_call(subject) / per_call(baseline) for _ in range(rounds))


def bench(name: str, codec: ChatCodec) -> None:
    if name in REQUESTS:
        body = json.dumps(json.loads(REQUESTS[name].read_text())["body"]).encode()
        r = ratio(lambda: codec.decode_request(body), lambda: orjson.loads(body))
        print(f"{name:<20} {f'decode request ({len(body) // 1024} KiB)':<34} {r:>10.2f}")
    events = codec.encode_stream(LONG)
    wire = b"".join(events)

    def floor() -> None:
        for event in decode_all([wire]):
            if event.data.startswith("{"):
                orjson.loads(event.data)

    r = ratio(lambda: codec.decode_stream([wire]), floor)
    print(f"{name:<20} {f'decode stream ({len(events)} events)':<34} {r:>10.2f}")
    payloads = [{"type": "delta", "index": 0, "text": "word "} for _ in events]
    r = ratio(lambda: codec.encode_stream(LONG), lambda: [orjson.dumps(p) for p in payloads])
    print(f"{name:<20} {f'encode stream ({len(events)} events)':<34} {r:>10.2f}")


def main() -> None:
    print(f"{'codec':<20} {'measurement':<34} {'× baseline':>10}")
    for name, codec in CHAT_CODECS.items():
        bench(name, codec)


if __name__ == "__main__":
    main()
