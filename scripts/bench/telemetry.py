"""Telemetry's cost in replay (targets: docs/performance.md#telemetry): `llmproxy replay` serving the same small
Messages request again and again with telemetry off, with spans and metrics exported over OTLP to a live
receiver (and `/metrics` kept), and exporting to a receiver that is down. CPU milliseconds per request of the
proxy's process tree is the figure (requests per second swing with the neighbours' load on a shared machine);
the table gives each against telemetry off, medians over rounds whose order alternates.

    .venv/bin/python scripts/bench/telemetry.py [--quick] [--rounds N] [--seconds S]

The receiver is the tests' (tests/telemetry/receiver.py: OTLP/HTTP decoded with opentelemetry-proto), on a
thread of this process: its CPU is not the proxy's.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--quick", action="store_true", help="one short round")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.seconds = 1, 2.0
    upstream_port = free_port()  # nothing listens there: replay must not need it
    started: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as scratch, receiver() as (url, received):
        workdir = Path(scratch)
        cassette = workdir / "c.json"
        write_cassette(cassette, upstream_port, bodies(1))
        replay = [str(BIN / "llmproxy"), "replay", "--cassette", str(cassette), "--port", "{port}"]
        replay += ["--on-exhausted", "repeat-last"]
        down = f"http://127.0.0.1:{free_port()}"
        commands = {
            "off": replay,
            "OTLP to a live receiver": [*replay, "--otlp", url, "--metrics"],
            "OTLP to a receiver down": [*replay, "--otlp", down, "--metrics"],
        }
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
