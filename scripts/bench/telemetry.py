"""Telemetry's cost in replay (targets: docs/performance.md#telemetry): `llmproxy replay` serving the same small
Messages request again and again with telemetry off, with spans and metrics exported over OTLP to a live
receiver (and `/metrics` kept), and exporting to a receiver that is down. CPU milliseconds per request of the
proxy's process tree is the figure (requests per second swing with the neighbours' load on a shared machine);
the table gives each against telemetry off, medians over rounds whose order alternates.

    .venv/bin/python scripts/bench/telemetry.py [--quick] [--rounds N] [--seconds S]
    .venv/bin/python scripts/bench/telemetry.py --encoders [--rounds N]
    .venv/bin/python scripts/bench/telemetry.py --callgrind N

The receiver is the tests' (tests/telemetry/receiver.py: OTLP/HTTP decoded with opentelemetry-proto), on a
thread of this process: its CPU is not the proxy's.

`--encoders` measures only the encoding of one replayed call's span, in this process: llmproxy's own
(`llmproxy.telemetry.wire`) against the same span built and serialised with opentelemetry-proto's generated
messages, alternating over `--rounds`: CPU microseconds per span, and their ratio.

`--callgrind N` counts instead the instructions each proxy executes per request over N requests sent one after
another (valgrind's callgrind, as scripts/bench/chaos.py counts them), its export thread included: counting
goes on for a while after the last answer, until the spans of the last batch have been sent. A figure the
neighbours' load does not move.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from proxy import BIN, Target, free_port, stop  # noqa: E402
from replay import bodies, launch, load, write_cassette  # noqa: E402

from tests.telemetry.receiver import receiver  # noqa: E402


def encoders(rounds: int, spans: int = 20_000) -> str:
    """CPU microseconds per span: llmproxy's encoder against opentelemetry-proto's messages, medians."""
    import os
    import time

    import payloads
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    from llmproxy.cassette.decode import decode_answer
    from llmproxy.chain.incoming import Incoming
    from llmproxy.chain.reply import Reply, ReplySource
    from llmproxy.chain.taps.meter import replied
    from llmproxy.meter import Meter
    from llmproxy.model.exchange import RawRequest
    from llmproxy.providers.registry import chat_codec
    from llmproxy.telemetry.conventions import AttributeValue, attributes, error_type, facts_of, span_name
    from llmproxy.telemetry.wire import Encoder

    headers = (("host", "api.anthropic.com"), ("content-type", "application/json"))
    request = RawRequest(
        "POST", "https", "api.anthropic.com", 443, "/v1/messages", "HTTP/1.1", headers, payloads.small_request(), None
    )
    incoming = Incoming(request)
    assert incoming.route is not None
    codec = chat_codec(incoming.route)
    assert codec is not None
    completion = decode_answer(codec, 200, payloads.reply(), None)
    reply = Reply(200, (("content-type", "application/json"),), payloads.reply(), source=ReplySource.CASSETTE)
    call = Meter().add(replied(incoming, reply, completion))
    facts = facts_of(incoming, completion)
    given = attributes(call, facts, {"llmproxy.run.id": "0123456789abcdef"})
    encoder = Encoder({"service.name": "llmproxy"}, "llmproxy", "0")

    def value(found: AttributeValue) -> AnyValue:
        if isinstance(found, str):
            return AnyValue(string_value=found)
        if isinstance(found, bool):
            return AnyValue(bool_value=found)
        if isinstance(found, int):
            return AnyValue(int_value=found)
        if isinstance(found, float):
            return AnyValue(double_value=found)
        return AnyValue(array_value=ArrayValue(values=[value(item) for item in found]))

    def generated() -> bytes:
        ids = os.urandom(24)
        end = int(call.at.timestamp() * 1e9)
        span = Span(
            trace_id=ids[:16],
            span_id=ids[16:],
            name=span_name(call, facts),
            kind=Span.SPAN_KIND_CLIENT,
            start_time_unix_nano=end - int((call.latency_ms or 0) * 1e6),
            end_time_unix_nano=end,
            attributes=[KeyValue(key=key, value=value(found)) for key, found in given.items()],
        )
        if error_type(call) is not None:
            span.status.code = 2
        return span.SerializeToString()

    def written() -> bytes:
        return encoder.span(call, facts, encoder.attributes(given))

    ways = {"llmproxy.telemetry.wire": written, "opentelemetry-proto": generated}
    timings: dict[str, list[float]] = {name: [] for name in ways}
    for round_ in range(rounds):
        for name in ways if round_ % 2 == 0 else list(ways)[::-1]:
            encode = ways[name]
            begin = time.process_time()
            for _ in range(spans):
                encode()
            timings[name].append((time.process_time() - begin) / spans * 1e6)
            print(f"round {round_ + 1} {name:<24} {timings[name][-1]:.1f} µs CPU/span", file=sys.stderr)
    ours, theirs = (statistics.median(timings[name]) for name in ways)
    return (
        "| encoder | CPU µs / span |\n|---|---:|\n"
        f"| llmproxy.telemetry.wire | {ours:.1f} |\n| opentelemetry-proto | {theirs:.1f} |\n"
        f"\nopentelemetry-proto / llmproxy: {theirs / ours:.1f}×"
    )


def count_instructions(count: int) -> str:
    """Instructions per request of each variant, under callgrind, against telemetry off."""
    from chaos import _uninstrumented, instructions

    from llmproxy.telemetry.otlp import LINGER

    upstream_port = free_port()
    started: list[subprocess.Popen[bytes]] = []
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as scratch, receiver() as (url, received):
        workdir = Path(scratch)
        cassette = workdir / "c.json"
        write_cassette(cassette, upstream_port, bodies(1))
        try:
            for name, argv in variants(cassette, url).items():
                target, _, _ = launch(name.split()[0], [*_uninstrumented(workdir), *argv], workdir, upstream_port)
                assert target.process is not None
                started.append(target.process)
                target = Target(name, target.port, target.pid, target.process)
                counts[name] = instructions(target, upstream_port, "anthropic", count, workdir, settle=LINGER * 3)
                print(f"{name:<26} {counts[name]:>10,} instructions/request", file=sys.stderr)
        finally:
            stop(started)
        spans = len(received.spans)
    lines = ["| telemetry | instructions / request | vs off |", "|---|---:|---:|"]
    lines += [f"| {name} | {found:,} | {found / counts['off']:.3f}× |" for name, found in counts.items()]
    lines.append(f"\nspans the live receiver decoded: {spans:,}")
    return "\n".join(lines)


def variants(cassette: Path, url: str) -> dict[str, list[str]]:
    """Each variant's command line: replay with telemetry off, to the live receiver at `url`, to none."""
    replay = [str(BIN / "llmproxy"), "replay", "--cassette", str(cassette), "--port", "{port}"]
    replay += ["--on-exhausted", "repeat-last"]
    down = f"http://127.0.0.1:{free_port()}"
    return {
        "off": replay,
        "OTLP to a live receiver": [*replay, "--otlp", url, "--metrics"],
        "OTLP to a receiver down": [*replay, "--otlp", down, "--metrics"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--quick", action="store_true", help="one short round")
    parser.add_argument("--encoders", action="store_true", help="only the span encoders, in this process")
    parser.add_argument("--callgrind", type=int, metavar="N", help="count instructions over N requests instead")
    args = parser.parse_args()
    if args.callgrind:
        print(count_instructions(args.callgrind))
        return 0
    if args.encoders:
        print(encoders(args.rounds))
        return 0
    if args.quick:
        args.rounds, args.seconds = 1, 2.0
    upstream_port = free_port()  # nothing listens there: replay must not need it
    started: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as scratch, receiver() as (url, received):
        workdir = Path(scratch)
        cassette = workdir / "c.json"
        write_cassette(cassette, upstream_port, bodies(1))
        commands = variants(cassette, url)
        targets: list[Target] = []
        runs: dict[str, list[dict[str, Any]]] = {}
        try:
            for name, argv in commands.items():
                target, _, _ = launch(name.split()[0] + str(len(targets)), argv, workdir, upstream_port)
                target = Target(name, target.port, target.pid, target.process)
                assert target.process is not None
                started.append(target.process)
                targets.append(target)
            for round_ in range(args.rounds):
                for target in targets if round_ % 2 == 0 else targets[::-1]:
                    result = load(target, upstream_port, 8, args.seconds)
                    runs.setdefault(target.name, []).append(result)
                    print(
                        f"round {round_ + 1} {target.name:<24} {result['rps']:7.0f} req/s "
                        f"{result['cpu_ms']:.3f} ms CPU/req",
                        file=sys.stderr,
                    )
        finally:
            stop(started)
        spans = len(received.spans)
    off = statistics.median(run["cpu_ms"] for run in runs["off"])
    lines = ["| telemetry | req/s | CPU ms / request | CPU vs off |", "|---|---:|---:|---:|"]
    for name, results in runs.items():
        cpu = statistics.median(run["cpu_ms"] for run in results)
        rps = statistics.median(run["rps"] for run in results)
        lines.append(f"| {name} | {rps:.0f} | {cpu:.3f} | {cpu / off:.2f}× |")
    lines.append(f"\nspans the live receiver decoded: {spans:,}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
