"""How fast redaction scans, in one process: at least 200 MB/s on one core is the target
(docs/performance.md#large-answers-keeping-up-in-bounded-memory).

    .venv/bin/python scripts/bench/redaction.py [--rounds N]

Scan rates in MB/s of what the cassette writer redacts, median over rounds:

* a 200 KB agent request (JSON: the whole-document scan that decides whether it needs walking);
* a 200 KB answer as text, and as JSON;
* a streamed answer of 2,000 deltas (per-event parsing, joining and storing: what a stream costs);
* the same 200 KB request holding a key (the slow path: the document walked string by string);
* `orjson.dumps` of the request: the floor any scan of its text starts from.
"""

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parents[1]))
sys.path.insert(0, str(BENCH))

import payloads  # noqa: E402

from llmproxy.cassette.redact import Redactor  # noqa: E402
from llmproxy.cassette.stream_redact import store_events  # noqa: E402
from llmproxy.model.exchange import RawEvent  # noqa: E402

REDACTOR = Redactor()


def rate(work: Callable[[], object], size: int, rounds: int) -> float:
    """MB/s: the median over rounds of enough calls to take ~0.2 s."""
    work()
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < 0.05:
        work()
        calls += 1
    results = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(max(1, calls * 4)):
            work()
        results.append(size * max(1, calls * 4) / (time.perf_counter() - start) / 1e6)
    return statistics.median(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    request = orjson.loads(payloads.large_request(200_000))
    request_bytes = len(orjson.dumps(request))
    answer = orjson.loads(payloads.reply(200_000))
    text = answer["content"][0]["text"]
    deltas = [payloads.text_delta(text[i : i + 100]) for i in range(0, 200_000, 100)]
    stream = [RawEvent(float(i), data) for i, data in enumerate(deltas)]
    stream_bytes = sum(len(event.data) for event in stream)
    keyed = orjson.loads(payloads.large_request(200_000))
    keyed["messages"][1]["content"][0]["text"] += " my key is " + payloads.API_KEY
    cases = [
        ("200 KB request (JSON)", lambda: REDACTOR.json(request), request_bytes),
        ("200 KB answer (text)", lambda: REDACTOR.text(text), len(text)),
        ("200 KB answer (JSON)", lambda: REDACTOR.json(answer), len(orjson.dumps(answer))),
        ("stream of 2,000 deltas", lambda: store_events(stream, "text/event-stream", REDACTOR), stream_bytes),
        ("200 KB request holding a key", lambda: REDACTOR.json(keyed), request_bytes),
        ("orjson.dumps of the request (floor)", lambda: orjson.dumps(request), request_bytes),
    ]
    print("| what | MB/s | ≥ 200 MB/s |\n|---|---|---|")
    for name, work, size in cases:
        mbs = rate(work, size, args.rounds)
        verdict = "–" if "floor" in name or "key" in name or "stream" in name else "yes" if mbs >= 200 else "NO"
        print(f"| {name} | {mbs:,.0f} | {verdict} |")


if __name__ == "__main__":
    main()
