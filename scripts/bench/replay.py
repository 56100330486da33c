"""What replay serves (targets: docs/performance.md#replay, #where-each-mode-stands): `llmproxy replay` against
mitmproxy's own `--server-replay` on the same exchanges, each with 1 and with 10,000 exchanges recorded; how long each
takes from launch to its first answered request, its peak memory, and how long a 10,000-exchange cassette takes to load
and index.

    .venv/bin/python scripts/bench/replay.py [--quick] [--rounds N] [--seconds S]
    .venv/bin/python scripts/bench/replay.py --start-only [--rounds N]
    .venv/bin/python scripts/bench/replay.py --index-only [--rounds N]

Both proxies run as processes of their own in regular (HTTPS_PROXY-style) proxy mode; llmproxy twice, on each of
its doors: the lean door (its own, what `llmproxy replay` uses) and mitmproxy (`llmproxy-mitm-…`: an `--map` of a
host nobody asks for makes a session mitmproxy's, with nothing else changed); the load generator
(load.py) sends the same small Messages request again and again (keep-alive, concurrency 1 and 8), so both
serve it repeatedly: llmproxy with `--on-exhausted repeat-last`, mitmdump with `--server-replay-reuse`. The
request is the first exchange of the 10,000 (the others differ in their prompt). Nothing reaches an upstream.
Rounds alternate the order of the targets; tables give medians over rounds. On a machine shared with other
work, requests per second swing with the neighbours' load; CPU milliseconds per request (the proxy's whole
process tree) is the steadier figure, and the tables give both ratios.

`--index-only` measures only loading the 10,000-exchange cassette and indexing it whole (a request for its last
exchange), in this process, with the default preset and with `--preset none` (requests compared as sent),
alternating over `--rounds`: what the default preset's neutral keys cost.

`--start-only` measures only the start: each proxy launched afresh `--rounds` times on the 1- and the
10,000-exchange recordings, its launch → first answer (wall), the CPU it spent until then, and its peak memory
once it answered (medians). `--versus CHECKOUT` adds `llmproxy replay` from another source tree (a worktree of
main, say) to those starts.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parents[1]
sys.path.insert(0, str(ROOT))

import payloads  # noqa: E402
from proxy import BIN, Target, free_port, stop  # noqa: E402

from llmproxy.cassette.recorded import load_recorded  # noqa: E402
from llmproxy.cassette.redact import Redactor  # noqa: E402
from llmproxy.cassette.replay_index import MatchOptions, ReplayHit, ReplayIndex  # noqa: E402
from llmproxy.cassette.store import CassetteWriter  # noqa: E402
from llmproxy.model.exchange import RawExchange, RawRequest, RawResponse  # noqa: E402

STARTED = datetime.now(UTC)
UNASKED = "unasked.invalid"  # mapped to make a session mitmproxy's: no request names it


def bodies(count: int) -> list[bytes]:
    """The load generator's request first, then `count - 1` others."""
    first = payloads.small_request()
    template = json.loads(first)
    others = []
    for i in range(1, count):
        template["messages"][0]["content"] = f"Question {i}: what is {i} plus {i}?"
        others.append(json.dumps(template).encode())
    return [first, *others]


def write_cassette(path: Path, upstream_port: int, requests: list[bytes]) -> None:
    headers = (
        ("host", f"127.0.0.1:{upstream_port}"),
        ("content-type", "application/json"),
        ("anthropic-version", "2023-06-01"),
        ("x-api-key", payloads.API_KEY),
    )
    answer = payloads.reply()
    writer = CassetteWriter.open(path, Redactor())
    for body in requests:
        request = RawRequest(
            "POST", "http", "127.0.0.1", upstream_port, "/v1/messages", "HTTP/1.1", headers, body, None
        )
        response = RawResponse(200, "OK", "HTTP/1.1", (("content-type", "application/json"),), answer, None, None)
        writer.add(RawExchange(request, response, None, STARTED, 1.0, 2.0))
    writer.close()


def write_flows(path: Path, upstream_port: int, requests: list[bytes]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from mitmproxy import http, io
        from mitmproxy.test import tflow

    answer = payloads.reply()
    with path.open("wb") as handle:
        writer = io.FlowWriter(handle)
        for body in requests:
            flow = tflow.tflow()
            flow.request = http.Request.make(
                "POST",
                f"http://127.0.0.1:{upstream_port}/v1/messages",
                body,
                {"content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": payloads.API_KEY},
            )
            flow.response = http.Response.make(200, answer, {"content-type": "application/json"})
            writer.add(flow)


def first_answer(port: int, upstream_port: int, deadline: float = 120.0) -> None:
    """Send the load generator's request once the port accepts, and read the answer's status line."""
    body = payloads.small_request()
    head = (
        f"POST http://127.0.0.1:{upstream_port}/v1/messages HTTP/1.1\r\nhost: 127.0.0.1:{upstream_port}\r\n"
        f"content-type: application/json\r\nanthropic-version: 2023-06-01\r\nx-api-key: {payloads.API_KEY}\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    end = time.monotonic() + deadline
    while True:
        try:
            connection = socket.create_connection(("127.0.0.1", port), timeout=deadline)
            break
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.005)
    with connection:
        connection.sendall(head.encode() + body)
        status = connection.recv(64)
    if not status.startswith(b"HTTP/1.1 200"):
        sys.exit(f"the first request got {status!r}")


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM), with its children's (a cassette writer) added."""
    total = 0.0
    for candidate in [pid, *_children(pid)]:
        try:
            with open(f"/proc/{candidate}/status") as status:
                total += next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
        except OSError:
            continue
    return total


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            return [int(child) for child in children.read().split()]
    except OSError:
        return []


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process has spent so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def launch(name: str, argv: list[str], workdir: Path, upstream_port: int) -> tuple[Target, float, float]:
    """Start a proxy and send it one request: the proxy, the seconds until it answered and its CPU seconds."""
    port = free_port()
    begin = time.monotonic()
    process = subprocess.Popen(
        [a.replace("{port}", str(port)) for a in argv],
        stdout=(workdir / f"{name}.log").open("wb"),
        stderr=subprocess.STDOUT,
        cwd=workdir,
    )
    first_answer(port, upstream_port)
    ready = time.monotonic() - begin
    return Target(name, port, process.pid, process), ready, cpu_seconds(process.pid)


def load(target: Target, upstream_port: int, concurrency: int, seconds: float) -> dict[str, Any]:
    argv = [sys.executable, str(BENCH / "load.py"), "--port", str(target.port), "--upstream-port", str(upstream_port)]
    argv += ["--proxy", "--body", "small", "--concurrency", str(concurrency), "--seconds", str(seconds)]
    argv += ["--cpu-pid", str(target.pid)]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"load against {target.name} (c={concurrency}) failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    result["cpu_ms"] = result["cpu_ms"][str(target.pid)]
    return result


def loading_seconds(path: Path, repeats: int = 3) -> float:
    """Median seconds to load a cassette and build its replay index, in this process."""
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        ReplayIndex(load_recorded(path))
        times.append(time.perf_counter() - begin)
    return statistics.median(times)


def indexing_seconds(path: Path, preset: str | None) -> float:
    """Seconds to load a cassette and index it whole (the request for its last exchange answered), in this
    process, comparing requests with `preset` (None: the default preset and the client's)."""
    begin = time.perf_counter()
    index = ReplayIndex(load_recorded(path), MatchOptions(preset=preset))
    last = index.recorded.request(index.size - 1)
    hit = index.take(last, index.recorded.provider(index.size - 1))
    elapsed = time.perf_counter() - begin
    assert isinstance(hit, ReplayHit), hit
    return elapsed


def index_only(path: Path, rounds: int) -> str:
    """`indexing_seconds` with the default preset and with none, alternating: medians and their ratio."""
    seconds: dict[str, list[float]] = {"default": [], "none": []}
    for round_ in range(rounds):
        order = ["default", "none"] if round_ % 2 == 0 else ["none", "default"]
        for preset in order:
            seconds[preset].append(indexing_seconds(path, None if preset == "default" else preset))
            print(f"round {round_ + 1} preset {preset:<8} {seconds[preset][-1]:.2f} s", file=sys.stderr)
    default, none = statistics.median(seconds["default"]), statistics.median(seconds["none"])
    return (
        f"load + index 10k, whole: {default:.2f} s with the default preset, {none:.2f} s with --preset none"
        f" ({default / none:.2f}×; medians of {rounds})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--quick", action="store_true", help="one short round")
    parser.add_argument("--start-only", action="store_true", help="only launch → first answer, and memory")
    parser.add_argument("--index-only", action="store_true", help="only load and index 10k, per preset")
    parser.add_argument(
        "--versus", type=Path, action="append", default=[], help="with --start-only: another llmproxy source tree"
    )
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.seconds = 1, 1.0
    upstream_port = free_port()  # nothing listens there: replay must not need it
    started: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        targets: list[Target] = []
        ready: dict[str, float] = {}
        commands: dict[int, tuple[tuple[str, list[str]], ...]] = {}
        try:
            for count in (1, 10_000):
                requests = bodies(count)
                cassette, flows = workdir / f"c{count}.json", workdir / f"f{count}.flows"
                write_cassette(cassette, upstream_port, requests)
                write_flows(flows, upstream_port, requests)
                if count == 10_000:
                    print(f"10,000-exchange cassette: {cassette.stat().st_size:,} bytes", file=sys.stderr)
                    if args.index_only:
                        print(index_only(cassette, args.rounds))
                        return 0
                    if not args.start_only:
                        ready["load+index 10k"] = loading_seconds(cassette)
                mitmdump = [str(BIN / "mitmdump"), "-q", "--listen-host", "127.0.0.1", "--listen-port", "{port}"]
                mitmdump += [
                    "--server-replay",
                    str(flows),
                    "--server-replay-reuse",
                    "--set",
                    "connection_strategy=lazy",
                ]
                llmproxy = [str(BIN / "llmproxy"), "replay", "--cassette", str(cassette), "--port", "{port}"]
                llmproxy += ["--on-exhausted", "repeat-last"]
                on_mitmproxy = [*llmproxy, "--map", f"{UNASKED}=http://127.0.0.1:9"]
                commands[count] = (
                    (f"mitmdump-{count}", mitmdump),
                    (f"llmproxy-{count}", llmproxy),
                    (f"llmproxy-mitm-{count}", on_mitmproxy),
                )
                for checkout in args.versus:  # that tree's code on this venv's libraries (env execs: same pid)
                    tree = checkout.resolve()
                    path = f"PYTHONPATH={tree}{os.pathsep}{tree / 'addons'}"
                    argv = ["env", path, sys.executable, "-m", "llmproxy", *llmproxy[1:]]
                    commands[count] += ((f"llmproxy-{count} @ {tree.name}", argv),)
                if args.start_only:
                    continue
                for name, argv in commands[count]:
                    target, ready[name], _ = launch(name, argv, workdir, upstream_port)
                    assert target.process is not None
                    started.append(target.process)
                    targets.append(target)
            if args.start_only:
                print(starts(commands, workdir, upstream_port, args.rounds))
                return 0
            runs: dict[str, list[dict[str, Any]]] = {}
            for round_ in range(args.rounds):
                for concurrency in (1, 8):
                    for target in targets if round_ % 2 == 0 else targets[::-1]:
                        result = load(target, upstream_port, concurrency, args.seconds)
                        runs.setdefault(f"{concurrency}/{target.name}", []).append(result)
                        print(
                            f"round {round_ + 1} c={concurrency} {target.name:<16} {result['rps']:8.0f} req/s",
                            file=sys.stderr,
                        )
            memory = {target.name: peak_rss_mb(target.pid) for target in targets}
        finally:
            stop(started)
    print(report(runs, targets, ready, memory))
    return 0


def starts(
    commands: dict[int, tuple[tuple[str, list[str]], ...]], workdir: Path, upstream_port: int, rounds: int
) -> str:
    """Each proxy launched `rounds` times, alternating the order: medians of its start's figures."""
    figures: dict[str, list[tuple[float, float, float]]] = {}
    everything = [command for count in sorted(commands) for command in commands[count]]
    for round_ in range(rounds):
        for name, argv in everything if round_ % 2 == 0 else everything[::-1]:
            target, ready, cpu = launch(name, argv, workdir, upstream_port)
            assert target.process is not None
            try:
                memory = peak_rss_mb(target.pid)
            finally:
                stop([target.process])
            figures.setdefault(name, []).append((ready, cpu, memory))
            print(f"round {round_ + 1} {name:<16} {ready:6.2f} s, {cpu:.2f} s CPU, {memory:.0f} MB", file=sys.stderr)
    lines = ["| target | launch → first answer s (wall) | CPU s until then | peak RSS MB |", "|---|---|---|---|"]
    for name, _ in everything:
        wall, cpu, memory = (statistics.median(column) for column in zip(*figures[name], strict=True))
        lines.append(f"| {name} | {wall:.2f} | {cpu:.2f} | {memory:.0f} |")
    return "\n".join(lines)


def report(
    runs: dict[str, list[dict[str, Any]]], targets: list[Target], ready: dict[str, float], memory: dict[str, float]
) -> str:
    def med(key: str, field: str) -> float:
        return statistics.median(run[field] for run in runs[key])

    lines = ["| concurrency | target | req/s | p50 ms | p99 ms | proxy CPU ms/req |", "|---|---|---|---|---|---|"]
    for concurrency in (1, 8):
        for target in targets:
            key = f"{concurrency}/{target.name}"
            lines.append(
                f"| {concurrency} | {target.name} | {med(key, 'rps'):.0f} | {med(key, 'p50_ms'):.2f} | "
                f"{med(key, 'p99_ms'):.2f} | {med(key, 'cpu_ms'):.2f} |"
            )
    lines += [
        "",
        "| concurrency | exchanges | llmproxy ÷ mitmdump req/s (≥ 3×) | mitmdump ÷ llmproxy CPU/req (≥ 3×) "
        "| on mitmproxy: req/s | on mitmproxy: CPU/req | llmproxy 10k ÷ 1 req/s (≥ 0.95) |",
        "|---|---|---|---|---|---|---|",
    ]
    for concurrency in (1, 8):
        for count in (1, 10_000):
            theirs = f"{concurrency}/mitmdump-{count}"
            ratios = []
            for ours in (f"{concurrency}/llmproxy-{count}", f"{concurrency}/llmproxy-mitm-{count}"):
                ratios += [med(ours, "rps") / med(theirs, "rps"), med(theirs, "cpu_ms") / med(ours, "cpu_ms")]
            scale = med(f"{concurrency}/llmproxy-10000", "rps") / med(f"{concurrency}/llmproxy-1", "rps")
            shown = " | ".join(f"{ratio:.2f}×" for ratio in ratios)
            lines.append(f"| {concurrency} | {count:,} | {shown} | {scale:.2f} |")
    lines += ["", "| target | launch → first answer s | peak RSS MB |", "|---|---|---|"]
    lines += [f"| {target.name} | {ready[target.name]:.2f} | {memory[target.name]:.0f} |" for target in targets]
    lines += ["", f"load + index 10k in-process: {ready['load+index 10k']:.2f} s"]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
