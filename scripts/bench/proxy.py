"""What recording costs the traffic it records (docs/performance.md#recordings-cost): `llmproxy record` against bare
mitmdump and against no proxy at all, in one run.

    .venv/bin/python scripts/bench/proxy.py [--quick] [--rounds N] [--seconds S] [--json PATH]
                                           [--profile DIR]

Every process is its own (no shared GIL): a fake Anthropic upstream (upstream.py), the proxies, and a load
generator (load.py) started afresh for each measurement. Targets:

* direct — the client talks to the upstream itself;
* mitmdump — `mitmdump -q`, default addons, buffering every body (the throughput baseline);
* mitmdump-stream — the same with `--set stream_large_bodies=1`, so it streams (the streaming baseline);
* llmproxy-core — llmproxy's in-process proxy without the recorder (core_proxy.py): where record's cost
  is the recorder's own and where it is the proxy's;
* record — `llmproxy record --cassette <tmp>/c.json --port P`, skipped with a message if the command is
  missing.

Measured: requests per second, p50/p99 latency and proxy CPU-ms per request for ~300-byte and ~200 KB
request bodies at concurrency 1 and 8; then streams (N content_block_delta events, MS apart): the delay
each event gains on its way (arrival − send stamp) and the time to the first event, at concurrency 1 and 8.
Rounds run the targets in alternating order (ABC, CBA, …); the tables give the median over rounds.
`--profile DIR` runs llmproxy-core and record under cProfile (figures are then distorted) and prints
where record spends its time.
"""

import argparse
import json
import os
import pstats
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parents[1]
BIN = Path(sys.executable).parent  # the venv's bin: mitmdump and llmproxy live beside its python
CASES = [("small", 1), ("small", 8), ("large", 1), ("large", 8)]


@dataclass
class Target:
    name: str
    port: int
    pid: int  # the process whose CPU is counted: the proxy, or for direct the upstream
    process: subprocess.Popen[bytes] | None = None
    proxy: bool = True
    throughput: bool = True  # measured with whole requests
    streams: bool = True  # measured with streams


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


LISTEN_TIMEOUT = 120  # seconds: mitmdump reads a 10,000-flow file before it listens, slowly on a busy machine
CALLGRIND_LISTEN_TIMEOUT = 900  # under valgrind a proxy starts some 50 times slower, more on a busy machine


def wait_listening(
    port: int, process: subprocess.Popen[bytes], name: str, log: Path, timeout: float = LISTEN_TIMEOUT
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"{name} exited with status {process.returncode}:\n{log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{name} did not listen on port {port} within {timeout:.0f} s:\n{log.read_text()}")


def start(
    name: str,
    argv: list[str],
    workdir: Path,
    started: list[subprocess.Popen[bytes]],
    profile: Path | None = None,
    listen_timeout: float = LISTEN_TIMEOUT,
    **kinds: bool,
) -> Target:
    """Start a proxy on a free port ('{port}' in argv), under cProfile if `profile` names a folder; it must listen
    within `listen_timeout` seconds."""
    port = free_port()
    argv = [a.replace("{port}", str(port)) for a in argv]
    if profile is not None:
        entry = argv[1:] if argv[0] == sys.executable else ["llmproxy", *argv[1:]]
        argv = [sys.executable, str(BENCH / "profiled.py"), str(profile / f"{name}.prof"), *entry]
    log = workdir / f"{name}.log"
    process = subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.STDOUT, cwd=workdir)
    started.append(process)
    wait_listening(port, process, name, log, listen_timeout)
    return Target(name, port, process.pid, process, **kinds)


def stop(started: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to every process (record then finalises its cassette), and wait for them to end."""
    for process in started:
        process.terminate()
    for process in started:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


def busy() -> tuple[float, float, float]:
    """(wall seconds, CPU seconds the whole machine has been busy, CPU seconds of this script's ended children)."""
    with open("/proc/stat") as stat:
        ticks = [int(field) for field in stat.readline().split()[1:]]
    machine = (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait
    times = os.times()
    return time.monotonic(), machine, times.children_user + times.children_system


def record_available() -> bool:
    found = subprocess.run([BIN / "llmproxy", "record", "--help"], capture_output=True)
    if found.returncode != 0:
        print("record: skipped — `llmproxy record --help` failed (the command is not built yet)", file=sys.stderr)
    return found.returncode == 0


def load(target: Target, upstream: Target, body: str, concurrency: int, args: argparse.Namespace) -> dict[str, Any]:
    argv = [sys.executable, str(BENCH / "load.py"), "--port", str(target.port), "--upstream-port", str(upstream.port)]
    argv += ["--body", body, "--concurrency", str(concurrency), "--cpu-pid", str(target.pid)]
    argv += ["--seconds", str(args.seconds), "--streams", str(args.streams)]
    if target.proxy:
        argv.append("--proxy")
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"load against {target.name} ({body}, c={concurrency}) failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    if body == "stream" and result["events"] != args.events * args.streams * concurrency:
        sys.exit(
            f"{target.name} passed on {result['events']} stream events, not {args.events * args.streams * concurrency}"
        )
    result["cpu_ms"] = result["cpu_ms"][str(target.pid)]
    return result


def measure(targets: list[Target], upstream: Target, args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    """Every case on every target, round after round, in alternating order; results by 'case/target'."""
    runs: dict[str, list[dict[str, Any]]] = {}
    cases = [*CASES, ("stream", 1), ("stream", 8)]
    for round_ in range(args.rounds):
        for body, concurrency in cases:
            ordered = targets if round_ % 2 == 0 else targets[::-1]
            for target in ordered:
                if not (target.streams if body == "stream" else target.throughput):
                    continue
                result = load(target, upstream, body, concurrency, args)
                runs.setdefault(f"{body}/{concurrency}/{target.name}", []).append(result)
                print(
                    f"round {round_ + 1} {body:<6} c={concurrency} {target.name:<16} {brief(result)}", file=sys.stderr
                )
    return runs


def brief(result: dict[str, Any]) -> str:
    if "rps" in result:
        return f"{result['rps']:8.0f} req/s  p50 {result['p50_ms']:6.2f} ms  p99 {result['p99_ms']:6.2f} ms"
    return f"event delay p50 {result['delay_p50_ms']:.3f} ms  p99 {result['delay_p99_ms']:.3f} ms"


def median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def report(runs: dict[str, list[dict[str, Any]]], names: list[str], args: argparse.Namespace) -> str:
    """Markdown tables of the medians over rounds, and the verdicts against the targets
    (docs/performance.md#recordings-cost)."""
    lines = [
        "| body | concurrency | target | req/s | p50 ms | p99 ms | proxy CPU ms/req |",
        "|---|---|---|---|---|---|---|",
    ]
    for body, concurrency in CASES:
        for name in names:
            if (cell := runs.get(f"{body}/{concurrency}/{name}")) is not None:
                cpu = "–" if name == "direct" else f"{median(cell, 'cpu_ms'):.2f}"
                lines.append(
                    f"| {body} ({cell[0]['request_bytes']:,} B) | {concurrency} | {name} | {median(cell, 'rps'):.0f} "
                    f"| {median(cell, 'p50_ms'):.2f} | {median(cell, 'p99_ms'):.2f} | {cpu} |"
                )
    lines += ["", "| body | concurrency | proxy | req/s ÷ mitmdump | req/s ÷ direct | CPU/req ÷ mitmdump | ≥ 1.0× |"]
    lines.append("|---|---|---|---|---|---|---|")
    for body, concurrency in CASES:
        base, direct = runs[f"{body}/{concurrency}/mitmdump"], runs[f"{body}/{concurrency}/direct"]
        for name in ("llmproxy-core", "record"):
            if (cell := runs.get(f"{body}/{concurrency}/{name}")) is not None:
                rps = median(cell, "rps")
                ratio, cpu = rps / median(base, "rps"), median(cell, "cpu_ms") / median(base, "cpu_ms")
                lines.append(
                    f"| {body} | {concurrency} | {name} | {ratio:.2f} | {rps / median(direct, 'rps'):.2f} "
                    f"| {cpu:.2f} | {'yes' if ratio >= 1.0 else 'NO'} |"
                )
    lines += [
        "",
        f"Streams: {args.events} content_block_delta events {args.interval_ms:g} ms apart, "
        f"{args.streams} stream(s) per connection per round.",
        "",
        "| concurrency | target | event delay p50 ms | p99 ms | added p50 over direct ms | first event ms "
        "| proxy CPU ms/event |",
        "|---|---|---|---|---|---|---|",
    ]
    for concurrency in (1, 8):
        direct = median(runs[f"stream/{concurrency}/direct"], "delay_p50_ms")
        for name in names:
            if (cell := runs.get(f"stream/{concurrency}/{name}")) is not None:
                cpu = "–" if name == "direct" else f"{median(cell, 'cpu_ms'):.3f}"
                delay = median(cell, "delay_p50_ms")
                lines.append(
                    f"| {concurrency} | {name} | {delay:.3f} | {median(cell, 'delay_p99_ms'):.3f} "
                    f"| {delay - direct:.3f} | {median(cell, 'first_event_ms'):.2f} | {cpu} |"
                )
    lines.append("")
    for concurrency in (1, 8):
        if (cell := runs.get(f"stream/{concurrency}/record")) is not None:
            added = median(cell, "delay_p50_ms") - median(runs[f"stream/{concurrency}/mitmdump-stream"], "delay_p50_ms")
            verdict = "meets" if added <= 0.3 else "MISSES"
            lines.append(
                f"Concurrency {concurrency}: record adds {added:+.3f} ms per event over mitmdump-stream "
                f"(target ≤ 0.3 ms: {verdict})."
            )
    return "\n".join(lines)


def where_time_goes(profile: Path, name: str) -> str:
    """The functions that cost the most CPU: by own time overall, and llmproxy's own code by cumulative time."""
    stats = pstats.Stats(str(profile / f"{name}.prof"))
    total = stats.total_tt  # CPU seconds: profiled.py times with process_time, so waiting costs nothing
    rows = [(where, *figures[1:4]) for where, figures in stats.stats.items()]
    # llmproxy's per-flow code: its files, called more often than start-up and shutdown code is
    ours = [row for row in rows if row[0][0].startswith((str(ROOT / "llmproxy"), str(ROOT / "addons"))) and row[1] > 9]
    out = [f"\n{name}: {total:.1f} CPU s profiled (cProfile slows the run above; read shares, not times)"]
    for title, chosen, column in (("by own time", rows, 2), ("llmproxy's code by cumulative time", ours, 3)):
        out.append(f"\n{title}:   own%   cum%     calls  function")
        for (file, line, function), calls, own, cumulative in sorted(chosen, key=lambda row: -row[column])[:20]:
            where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if line else file
            out.append(
                f"{' ' * len(title)}  {100 * own / total:5.1f}  {100 * cumulative / total:5.1f}  {calls:>8}  "
                f"{where}({function})"
            )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a ~30 s smoke run: one short round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0, help="per throughput measurement")
    parser.add_argument("--streams", type=int, default=2, help="streams per connection per measurement")
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--interval-ms", type=float, default=5.0)
    parser.add_argument("--no-core", action="store_true", help="leave out llmproxy-core")
    parser.add_argument("--json", type=Path, help="also write every round's raw figures here")
    parser.add_argument("--profile", type=Path, help="run llmproxy-core and record under cProfile, stats here")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.seconds, args.streams, args.events = 1, 0.5, 1, 100
    if args.profile:
        args.profile = args.profile.resolve()
        args.profile.mkdir(parents=True, exist_ok=True)
    started: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="llmproxy-bench-") as tmp:
        try:
            run(args, Path(tmp), started)
        finally:
            stop(started)


def run(args: argparse.Namespace, workdir: Path, started: list[subprocess.Popen[bytes]]) -> None:
    before = busy()
    up = [
        sys.executable,
        str(BENCH / "upstream.py"),
        "--events",
        str(args.events),
        "--interval-ms",
        str(args.interval_ms),
    ]
    process = subprocess.Popen(up, stdout=subprocess.PIPE)
    started.append(process)
    assert process.stdout is not None
    upstream = Target("direct", int(process.stdout.readline()), process.pid, None, proxy=False)
    mitmdump = [str(BIN / "mitmdump"), "-q", "--listen-host", "127.0.0.1", "--listen-port", "{port}"]
    targets = [
        upstream,
        # bare mitmdump would buffer each stream whole: mitmdump-stream is the streaming baseline
        start("mitmdump", mitmdump, workdir, started, streams=False),
        start("mitmdump-stream", [*mitmdump, "--set", "stream_large_bodies=1"], workdir, started, throughput=False),
    ]
    if not args.no_core:
        core = [sys.executable, str(BENCH / "core_proxy.py"), "--port", "{port}"]
        targets.append(start("llmproxy-core", core, workdir, started, profile=args.profile))
    cassette = workdir / "c.json"
    if record_available():
        record = [str(BIN / "llmproxy"), "record", "--cassette", str(cassette), "--port", "{port}"]
        targets.append(start("record", record, workdir, started, profile=args.profile))
    runs = measure(targets, upstream, args)
    stop(started)
    wall, machine, ours = (end - start for end, start in zip(busy(), before, strict=True))
    share = 100 / wall / (os.cpu_count() or 1)
    print(
        f"{os.cpu_count()} CPUs, {args.rounds} round(s) in {wall:.0f} s; the benchmark's processes kept "
        f"{share * ours:.0f}% of the CPUs busy, other processes {share * (machine - ours):.0f}%\n"
    )
    print(report(runs, [t.name for t in targets], args))
    if cassette.exists():
        print(f"\nThe record cassette holds {cassette.stat().st_size:,} bytes.")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    for name in ("llmproxy-core", "record"):
        if args.profile and (args.profile / f"{name}.prof").exists():
            print(where_time_goes(args.profile, name))


if __name__ == "__main__":
    main()
