"""The load generator: raw HTTP/1.1 keep-alive connections on asyncio, one process of its own.

    python scripts/bench/load.py --port P --upstream-port U [--proxy]
                                 --body small|large|sized|sized-stream|stream|small-stream
                                 [--request-bytes B] --concurrency C [--seconds S | --streams N] [--cpu-pid PID …]
                                 [--accept-errors]

`--proxy` sends absolute-form requests (`POST http://127.0.0.1:U/v1/messages`) to port P, as any client of
a plain-http proxy does; without it the requests go straight to the upstream. Each connection warms up
with a few requests first. Prints one JSON object: requests per second and latency percentiles, or for
streams the per-event delay (arrival − the send time the upstream stamped in the event) and the time to
first event; `sent`, every request sent, warm-up included; plus the CPU milliseconds each `--cpu-pid`
process tree (it and every process below it) spent per request (or per stream event) while measuring. An
answer other than 200 stops the run, unless `--accept-errors` (a run with injected faults): then `errors`
counts them, and they count as requests.
"""

import argparse
import asyncio
import json
import os
import time
from dataclasses import dataclass, field

import payloads

TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
WARMUP_REQUESTS = 20


def cpu_ms(pid: int) -> float:
    """User + system CPU time in milliseconds of a process (all its threads) and every process below it (the
    cassette writer of `llmproxy record`): what serving costs the machine, whichever process spends it."""
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) * TICK_MS
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    todo += [int(child) for child in children.read().split()]
        except OSError:  # it ended meanwhile
            continue
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class Results:
    latencies: list[float] = field(default_factory=list)  # seconds per request
    delays: list[float] = field(default_factory=list)  # seconds per stream event, send → arrival
    first_events: list[float] = field(default_factory=list)  # seconds from request to first event
    events: int = 0
    sent: int = 0  # every request, warm-up included


class Connection:
    """One keep-alive client connection that sends the same request again and again."""

    def __init__(self, args: argparse.Namespace, body: bytes) -> None:
        self.args = args
        self.request = self.build(body)
        self.warmup = self.build(payloads.small_request())
        self.errors = 0  # answers other than 200 (--accept-errors)

    def build(self, body: bytes) -> bytes:
        path = "/v1/chat/completions" if self.args.api == "openai" else "/v1/messages"
        target = f"http://127.0.0.1:{self.args.upstream_port}{path}" if self.args.proxy else path
        head = (
            f"POST {target} HTTP/1.1\r\nhost: 127.0.0.1:{self.args.upstream_port}\r\n"
            f"content-type: application/json\r\nanthropic-version: 2023-06-01\r\nx-api-key: {payloads.API_KEY}\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body

    async def open(self, results: Results) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.args.port)
        for _ in range(WARMUP_REQUESTS if self.args.body != "stream" else 2):
            await self.exchange(self.warmup if self.args.body == "stream" else self.request, None)
            results.sent += 1

    async def exchange(self, request: bytes, results: Results | None) -> None:
        """Send one request and read the whole answer; with `results`, note what it measured."""
        start, wall = time.perf_counter(), time.time()
        if results is not None:
            results.sent += 1
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            if not self.args.accept_errors:
                raise RuntimeError(f"unexpected answer: {head[:200]!r}")
            self.errors += 1
        headers = head.lower()
        events = bytearray()
        first: float | None = None
        if b"transfer-encoding: chunked" in headers:
            while size := int((await self.reader.readline()).split(b";")[0], 16):
                events += (await self.reader.readexactly(size + 2))[:-2]
                arrived = time.time()
                first = first or arrived
                while (end := events.find(b"\n\n")) >= 0:
                    sent = payloads.sent_at(bytes(events[:end]))
                    del events[: end + 2]
                    if results is not None and sent is not None:
                        results.delays.append(arrived - sent)
                        results.events += 1
            await self.reader.readline()
        else:
            length = int(headers.split(b"content-length:")[1].split(b"\r\n")[0])
            await self.reader.readexactly(length)
        if results is not None:
            results.latencies.append(time.perf_counter() - start)
            if first is not None:
                results.first_events.append(first - wall)


async def run(args: argparse.Namespace) -> dict[str, object]:
    request_body = {
        "small": payloads.small_request,
        "large": payloads.large_request,
        "sized": lambda: payloads.sized_request(args.request_bytes),
        "sized-stream": lambda: payloads.sized_request(args.request_bytes, stream=True),
        "stream": lambda: payloads.small_request(stream=True),
        "small-stream": lambda: payloads.small_request(stream=True),
    }[args.body]()
    if args.api == "openai":
        request_body = payloads.chat_request(stream=args.body == "small-stream")
    connections = [Connection(args, request_body) for _ in range(args.concurrency)]
    results = Results()
    await asyncio.gather(*(c.open(results) for c in connections))
    before = {pid: cpu_ms(pid) for pid in args.cpu_pid}
    start = time.perf_counter()
    deadline = start + args.seconds

    async def work(connection: Connection) -> None:
        if args.body == "stream":
            for _ in range(args.streams):
                await connection.exchange(connection.request, results)
        else:
            while time.perf_counter() < deadline:
                await connection.exchange(connection.request, results)

    await asyncio.gather(*(work(c) for c in connections))
    elapsed = time.perf_counter() - start
    per = results.events if args.body == "stream" else len(results.latencies)
    cpu = {str(pid): (cpu_ms(pid) - before[pid]) / per for pid in args.cpu_pid}
    for connection in connections:
        connection.writer.close()
    if args.body == "stream":
        return {
            "streams": len(results.latencies),
            "events": results.events,
            "delay_p50_ms": percentile(results.delays, 0.5) * 1000,
            "delay_p99_ms": percentile(results.delays, 0.99) * 1000,
            "first_event_ms": percentile(results.first_events, 0.5) * 1000,
            "cpu_ms": cpu,
        }
    return {
        "requests": len(results.latencies),
        "sent": results.sent,
        "request_bytes": len(request_body),
        "errors": sum(connection.errors for connection in connections),  # warm-up included
        "rps": len(results.latencies) / elapsed,
        "p50_ms": percentile(results.latencies, 0.5) * 1000,
        "p99_ms": percentile(results.latencies, 0.99) * 1000,
        "cpu_ms": cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True, help="where to connect: the proxy or the upstream")
    parser.add_argument("--upstream-port", type=int, required=True)
    parser.add_argument("--proxy", action="store_true", help="send absolute-form requests, as to an HTTP proxy")
    parser.add_argument(
        "--body",
        choices=["small", "large", "sized", "sized-stream", "stream", "small-stream"],
        required=True,
        help="stream: timed stream events; small-stream, sized-stream: a streaming request measured in requests "
        "per second",
    )
    parser.add_argument("--request-bytes", type=int, default=1000, help="the size of a `sized` request body")
    parser.add_argument("--api", choices=["anthropic", "openai"], default="anthropic", help="small bodies only")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=2.0, help="how long to send requests (not streams)")
    parser.add_argument("--streams", type=int, default=2, help="streams per connection")
    parser.add_argument("--cpu-pid", type=int, action="append", default=[])
    parser.add_argument("--accept-errors", action="store_true", help="count non-200 answers instead of stopping")
    print(json.dumps(asyncio.run(run(parser.parse_args()))))


if __name__ == "__main__":
    main()
