"""The cassette writer's own work per exchange, in one process: `CassetteWriter.write` of the exchange
`recording.py` sends (a 200 KB agent history, answered by a 200 KB JSON body or a stream of 2,000 events).

    .venv/bin/python scripts/bench/record_writer.py --answers json --writes 40
    valgrind --tool=callgrind .venv/bin/python scripts/bench/record_writer.py --answers json --writes 11

Prints the CPU time per write, after one write that warms up. Under callgrind, run it with `--writes 11` and
`--writes 1`: the difference in instructions, divided by 10, is one write's, whatever the machine's load. Run it
from another source tree (`cd BEFORE && python …/record_writer.py`) to compare: it imports llmproxy from the
working directory first.
"""

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path[:0] = [".", str(Path(__file__).parent)]

from payloads import API_KEY, large_request, reply, stream_delta, stream_head, stream_tail  # noqa: E402

from llmproxy.cassette.redact import Redactor  # noqa: E402
from llmproxy.cassette.store import CassetteWriter  # noqa: E402
from llmproxy.model.exchange import RawEvent, RawExchange, RawRequest, RawResponse  # noqa: E402


def bench_exchange(stream: bool, size: int = 200_000, deltas: int = 2000) -> RawExchange:
    """The exchange as the writer receives it: the request, and the answer whole or cut into its events."""
    headers = (("content-type", "application/json"), ("x-api-key", API_KEY))
    body = large_request(size, stream)
    request = RawRequest("POST", "http", "127.0.0.1", 9, "/v1/messages", "HTTP/1.1", headers, body, None)
    if stream:
        whole = stream_head() + b"".join(stream_delta(100) for _ in range(deltas)) + stream_tail(deltas)
        events = tuple(RawEvent(float(n), event + b"\n\n") for n, event in enumerate(whole.split(b"\n\n")) if event)
        answer = RawResponse(200, "OK", "HTTP/1.1", (("content-type", "text/event-stream"),), None, events, None)
    else:
        answer = RawResponse(200, "OK", "HTTP/1.1", (("content-type", "application/json"),), reply(size), None, None)
    return RawExchange(request, answer, None, datetime(2026, 5, 1, tzinfo=UTC), 1.0, 2.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", choices=("json", "stream"), default="json")
    parser.add_argument("--writes", type=int, default=40)
    options = parser.parse_args()
    exchange = bench_exchange(options.answers == "stream")
    with tempfile.TemporaryDirectory() as directory:
        writer = CassetteWriter.open(Path(directory) / "bench.json", Redactor())
        writer.write(exchange)
        start = time.process_time()
        for _ in range(options.writes):
            writer.write(exchange)
        elapsed = time.process_time() - start
        writer.close()
    print(f"{options.answers}: {elapsed / max(options.writes, 1) * 1e3:.2f} ms of CPU a write")


if __name__ == "__main__":
    main()
