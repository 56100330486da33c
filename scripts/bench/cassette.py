"""What recording costs on the proxy's event loop, measured in one process (ratios, not seconds).

    .venv/bin/python scripts/bench/cassette.py

* `StreamCapture.feed`, one call per SSE event as the tap sees them (plain and gzip), against one
  `bytes.find` of the event terminator per event: the least any framing could do;
* `CassetteWriter.add` (what the event loop pays per exchange), against `orjson.dumps` of the request body;
* the writer thread's work per exchange (redact, convert, share history, journal), against `orjson.dumps`
  plus `orjson.loads` of the same exchange's bodies: off the event loop, reported so it stays sane.

Prints the median ratio over several rounds.
"""

import gzip
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from llmproxy.cassette.redact import Redactor  # noqa: E402
from llmproxy.cassette.store import CassetteWriter  # noqa: E402
from llmproxy.cassette.stream_capture import StreamCapture  # noqa: E402
from tests.cassette.factory import agent_session, exchange, request, response, sse_events  # noqa: E402

EVENTS = [
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'
    + f"word {i} ".encode() * 3
    + b'"}}\n\n'
    for i in range(2000)
]


def per_call(fn: Callable[[], object], seconds: float = 0.3) -> float:
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        fn()
        calls += 1
    return elapsed / calls


def ratio(subject: Callable[[], object], baseline: Callable[[], object], rounds: int = 5) -> tuple[float, float]:
    pairs = [(per_call(subject), per_call(baseline)) for _ in range(rounds)]
    return statistics.median(s / b for s, b in pairs), statistics.median(s for s, _ in pairs)


def feed_plain() -> None:
    capture = StreamCapture("text/event-stream", None, 0.0)
    for event in EVENTS:
        capture.feed(event, 1.0)
    capture.finish(1.0)


def gzip_chunks() -> list[bytes]:
    packer = zlib.compressobj(wbits=31)
    chunks = [packer.compress(event) + packer.flush(zlib.Z_SYNC_FLUSH) for event in EVENTS]
    return [*chunks, packer.flush()]


GZIPPED = gzip_chunks()


def feed_gzip() -> None:
    capture = StreamCapture("text/event-stream", "gzip", 0.0)
    for chunk in GZIPPED:
        capture.feed(chunk, 1.0)
    capture.finish(1.0)


def find_baseline() -> None:
    for event in EVENTS:
        event.find(b"\n\n")


def main() -> None:
    assert gzip.decompress(b"".join(GZIPPED)) == b"".join(EVENTS)
    for name, subject in (("plain", feed_plain), ("gzip", feed_gzip)):
        times, seconds = ratio(subject, find_baseline)
        per_event = seconds / len(EVENTS) * 1e6
        print(f"StreamCapture.feed per SSE event ({name}): {times:.1f}× bytes.find, {per_event:.2f} µs/event")

    bodies = agent_session(30)
    exchanges = [
        exchange(request(body), response(events=sse_events({"type": "ping"}) * 20, content_type="text/event-stream"))
        for body in bodies
    ]
    body_bytes = [item.request.body for item in exchanges]
    with tempfile.TemporaryDirectory() as directory:
        writer = CassetteWriter.open(Path(directory) / "bench.json", Redactor())
        start = time.perf_counter()
        for _ in range(10):
            for item in exchanges:
                writer.add(item)
        add_seconds = (time.perf_counter() - start) / (10 * len(exchanges))
        start = time.perf_counter()
        writer.close()
        thread_seconds = (time.perf_counter() - start + add_seconds * 10 * len(exchanges)) / (10 * len(exchanges))
    dumps_seconds = statistics.median(per_call(lambda: [orjson.dumps(body) for body in bodies]) for _ in range(3))
    dumps_seconds /= len(bodies)
    loads_seconds = statistics.median(per_call(lambda: [orjson.loads(b) for b in body_bytes]) for _ in range(3))
    loads_seconds /= len(bodies)
    print(f"CassetteWriter.add per exchange: {add_seconds / dumps_seconds:.2f}× orjson.dumps of its body")
    print(
        f"writer thread per exchange (30-turn agent session, 20 events each): "
        f"{thread_seconds / (dumps_seconds + loads_seconds):.1f}× orjson.dumps+loads of its body, "
        f"{thread_seconds * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
